// FerretDB (MongoDB wire protocol over SQLite) for the jobs-on-MongoDB test.
// No MongoDB server exists in the registries this project can reach, so the
// harness builds FerretDB from Go modules once and caches the binary outside
// the clone, keyed by version.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { cacheDir } from '@agent-host/core';
import type { Logger } from '@agent-host/sdk';

export const FERRETDB_VERSION = 'v1.24.0';
const MODULE = 'github.com/FerretDB/FerretDB';

function go(args: string[], cwd?: string): string {
  const result = spawnSync('go', args, { cwd, encoding: 'utf8', env: { ...process.env, GOFLAGS: '-mod=mod' } });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`go ${args.join(' ')} failed:\n${result.stderr.slice(-2000)}`);
  return result.stdout;
}

/** Path of a built `ferretdb` binary, building it on first use. */
export async function prepareFerretDb(logger: Logger): Promise<string> {
  const binary = path.join(cacheDir(''), `ferretdb-${FERRETDB_VERSION}`, 'ferretdb');
  if (existsSync(binary)) return binary;
  const started = Date.now();
  logger.warn({ version: FERRETDB_VERSION }, 'building FerretDB from Go modules (first run only)');
  const { Dir } = JSON.parse(go(['mod', 'download', '-json', `${MODULE}@${FERRETDB_VERSION}`])) as { Dir: string };
  const work = await mkdtemp(path.join(os.tmpdir(), 'ferretdb-build-'));
  try {
    await cp(Dir, work, { recursive: true });
    spawnSync('chmod', ['-R', 'u+w', work]);
    // The module archive lacks the version file its build reads.
    await writeFile(path.join(work, 'build', 'version', 'version.txt'), FERRETDB_VERSION + '\n');
    await mkdir(path.dirname(binary), { recursive: true });
    go(['build', '-o', `${binary}.partial`, './cmd/ferretdb'], work);
    await cp(`${binary}.partial`, binary);
    await rm(`${binary}.partial`, { force: true });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  logger.warn({ ms: Date.now() - started }, 'FerretDB built');
  return binary;
}
