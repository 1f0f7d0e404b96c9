import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { isAgentHostPlugin, PluginRefusedError, type AgentHostPlugin, type PluginManifest } from '@agent-host/sdk';

/** Where a plugin came from. */
export type PluginOrigin = 'first-party' | 'package' | 'path';

/** A plugin whose manifest has been read but whose code has not run. */
export interface PluginCandidate {
  id: string;
  specifier: string;
  origin: PluginOrigin;
  directory: string;
  packageName: string;
  version: string;
  manifest: PluginManifest;
  entry: string;
}

interface PackageJson {
  name?: string;
  version?: string;
  main?: string;
  exports?: unknown;
  agentHost?: PluginManifest;
}

const isPath = (specifier: string) => /^(\.{1,2}[\\/]|\/)/.test(specifier) || path.isAbsolute(specifier);
const FIRST_PARTY_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;

function packageDirOf(specifier: string, pluginsDir: string, baseDir: string): { dir: string; origin: PluginOrigin } {
  if (isPath(specifier)) return { dir: path.resolve(baseDir, specifier), origin: 'path' };
  if (FIRST_PARTY_ID.test(specifier) && existsSync(path.join(pluginsDir, specifier, 'package.json'))) {
    return { dir: path.join(pluginsDir, specifier), origin: 'first-party' };
  }
  const require = createRequire(path.join(baseDir, 'package.json'));
  try {
    return { dir: path.dirname(require.resolve(`${specifier}/package.json`)), origin: 'package' };
  } catch {
    const looked = [path.join(pluginsDir, specifier), `node_modules/${specifier} resolved from ${baseDir}`];
    throw new PluginRefusedError(
      specifier,
      'invalid_plugin',
      `no first-party plugin, package or path named "${specifier}" was found (looked in ${looked.join(' and ')}; a path must start with ./, ../ or /)`,
    );
  }
}

function entryOf(dir: string, pkg: PackageJson): string {
  const exportsField = pkg.exports as Record<string, unknown> | string | undefined;
  let target: unknown = typeof exportsField === 'string' ? exportsField : exportsField?.['.'];
  if (target && typeof target === 'object') target = (target as Record<string, unknown>).default ?? (target as Record<string, unknown>).import;
  return path.resolve(dir, typeof target === 'string' ? target : (pkg.main ?? 'index.js'));
}

/** Reads a plugin's manifest without running any of its code. */
export function readCandidate(specifier: string, pluginsDir: string, baseDir: string): PluginCandidate {
  const { dir, origin } = packageDirOf(specifier, pluginsDir, baseDir);
  const pkgFile = path.join(dir, 'package.json');
  if (!existsSync(pkgFile)) {
    throw new PluginRefusedError(specifier, 'invalid_plugin', `${dir} has no package.json`);
  }
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as PackageJson;
  const manifest = pkg.agentHost;
  if (!manifest || typeof manifest.id !== 'string' || typeof manifest.sdk !== 'string') {
    throw new PluginRefusedError(specifier, 'invalid_plugin', `${pkgFile} has no "agentHost" manifest with "id" and "sdk"`);
  }
  return {
    id: manifest.id,
    specifier,
    origin,
    directory: dir,
    packageName: pkg.name ?? manifest.id,
    version: pkg.version ?? '0.0.0',
    manifest,
    entry: entryOf(dir, pkg),
  };
}

/** Imports a candidate's entry and checks it matches its manifest. */
export async function importPlugin(candidate: PluginCandidate): Promise<AgentHostPlugin> {
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(candidate.entry).href)) as { default?: unknown };
  } catch (error) {
    throw new PluginRefusedError(candidate.id, 'invalid_plugin', `cannot import ${candidate.entry}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const plugin = mod.default;
  if (!isAgentHostPlugin(plugin)) {
    throw new PluginRefusedError(candidate.id, 'invalid_plugin', `${candidate.entry} has no default export made by definePlugin()`);
  }
  if (plugin.id !== candidate.id || plugin.sdk !== candidate.manifest.sdk) {
    throw new PluginRefusedError(
      candidate.id,
      'invalid_plugin',
      `manifest (id "${candidate.id}", sdk "${candidate.manifest.sdk}") does not match definePlugin (id "${plugin.id}", sdk "${plugin.sdk}")`,
    );
  }
  return plugin;
}
