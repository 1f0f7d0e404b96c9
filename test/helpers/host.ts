import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startHost, type AccessGuard, type RunningHost } from '@agent-host/host';
import { chromaUrl, createTestDatabase } from './services.js';

interface TapLike {
  teardown(fn: () => Promise<void> | void): void;
}

/** Grants every permission; stands in for an administrator session in route tests. */
export const allowAll: AccessGuard = { authorize: async () => undefined };

/**
 * Starts a host in this process on a fresh database and the shared Chroma,
 * with `env` on top; stopped when the test ends.
 */
export async function startTestHost(
  t: TapLike,
  options: { env?: Record<string, string>; guard?: AccessGuard; databaseUrl?: string } = {},
): Promise<RunningHost & { databaseUrl: string }> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase(t));
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-data-'));
  const host = await startHost({
    env: {
      ...process.env,
      APP_ENV: 'test',
      DATABASE_URL: databaseUrl,
      CHROMA_URL: chromaUrl(),
      AGENT_HOST_DATA_DIR: dataDir,
      ...options.env,
    },
    ...(options.guard && { guard: options.guard }),
  });
  t.teardown(() => host.stop());
  return { ...host, databaseUrl };
}

/** GET a path of a running host as JSON. */
export async function getJson(host: RunningHost, pathname: string): Promise<{ status: number; body: any }> {
  const response = await fetch(host.url + pathname);
  return { status: response.status, body: await response.json() };
}
