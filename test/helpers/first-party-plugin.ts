// Loads one first-party plugin (plugins/<id>, its built dist) through the real
// kernel, with its config section and the core services a test provides, so
// a test sees exactly what the host would register.
import 'reflect-metadata';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createRootLogger, Kernel, PROJECT_ROOT } from '@agent-host/core';
import { container } from 'tsyringe';
import { HealthRegistry } from '../../core/src/services/health.js';
import { recordingHttp } from './http-client.js';

/** `services` maps ref ids (`core.config`, ...) to instances; the logger (silent), health checks and the HTTP client are provided. */
export async function loadFirstPartyPlugin(id: string, config: Record<string, unknown> = {}, services: Record<string, unknown> = {}): Promise<Kernel> {
  const scope = container.createChildContainer();
  for (const [refId, value] of Object.entries({ 'core.http': recordingHttp(), ...services })) scope.register(refId, { useValue: value });
  const logger = createRootLogger('silent');
  const health = new HealthRegistry();
  const kernel = new Kernel({
    container: scope,
    logger,
    specifiers: [id],
    disabled: [],
    pluginsDir: path.join(PROJECT_ROOT, 'plugins'),
    baseDir: PROJECT_ROOT,
    pluginConfig: (pluginId) => (pluginId === id ? config : undefined),
    scopedServices: { 'core.logger': () => logger, 'core.health': (pluginId) => health.forOwner(pluginId) },
  });
  await kernel.init();
  return kernel;
}

/** The keys a first-party plugin's manifest `contributes`, without the `*` that marks config-dependent keys. */
export async function contributesOf(id: string): Promise<Record<string, string[]>> {
  const manifest = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'plugins', id, 'package.json'), 'utf8'));
  const contributes = (manifest.agentHost.contributes ?? {}) as Record<string, string[]>;
  return Object.fromEntries(Object.entries(contributes).map(([point, keys]) => [point, keys.filter((key) => key !== '*')]));
}
