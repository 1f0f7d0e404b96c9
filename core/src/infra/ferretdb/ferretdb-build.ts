// FerretDB (MongoDB wire protocol over SQLite), the MongoDB of the jobs-on-MongoDB test. No MongoDB server exists in
// the registries this project can reach, so FerretDB is built from Go modules once and the binary cached outside the
// clone, keyed by version.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '@agent-host/sdk';

export const FERRETDB_VERSION = 'v1.24.0';
const MODULE = 'github.com/FerretDB/FerretDB';

/**
 * Runs `go` without blocking the event loop: the harness builds FerretDB while
 * Postgres and Chroma start, and their start-up timers must keep running.
 */
function go(args: string[], cwd?: string): Promise<string> {
  // Keep the caller's GOFLAGS; -buildvcs=false because the build copy may sit inside some VCS checkout.
  const goflags = [process.env.GOFLAGS, '-mod=mod', '-buildvcs=false'].filter(Boolean).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, { cwd, env: { ...process.env, GOFLAGS: goflags }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-4000)));
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'ENOENT' ? new Error(`FerretDB ${FERRETDB_VERSION} is built from Go modules, but no \`go\` is on PATH`) : error),
    );
    child.once('close', (code) => {
      if (code === 0) resolve(stdout);
      // `go mod download -json` reports its error in the JSON on stdout.
      else reject(new Error(`go ${args.join(' ')} exited with ${code}:\n${(stderr || stdout).slice(-2000)}`));
    });
  });
}

/** Path of a built `ferretdb` binary under `cacheDir`, building it on first use. */
export async function ensureFerretDb(options: { cacheDir: string; logger: Logger }): Promise<string> {
  const { logger } = options;
  const binary = path.join(options.cacheDir, `ferretdb-${FERRETDB_VERSION}`, 'ferretdb');
  if (existsSync(binary)) return binary;
  const started = Date.now();
  logger.warn({ version: FERRETDB_VERSION }, 'building FerretDB from Go modules (first run only)');
  const { Dir } = JSON.parse(await go(['mod', 'download', '-json', `${MODULE}@${FERRETDB_VERSION}`])) as { Dir: string };
  const work = await mkdtemp(path.join(os.tmpdir(), 'ferretdb-build-'));
  // Unique per build, renamed into place: an interrupted or concurrent build never
  // leaves a partial file at `binary`, and a running binary is replaced, not rewritten.
  const partial = `${binary}.${process.pid}.partial`;
  try {
    await cp(Dir, work, { recursive: true });
    await makeWritable(work);
    // The module archive lacks the version file its build reads.
    await writeFile(path.join(work, 'build', 'version', 'version.txt'), FERRETDB_VERSION + '\n');
    await mkdir(path.dirname(binary), { recursive: true });
    await go(['build', '-o', partial, './cmd/ferretdb'], work);
    await rename(partial, binary);
  } finally {
    await rm(partial, { force: true });
    await rm(work, { recursive: true, force: true });
  }
  logger.warn({ ms: Date.now() - started }, 'FerretDB built');
  return binary;
}

/** The module cache is read-only; the build copy must be writable (and removable). */
async function makeWritable(dir: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const child = spawn('chmod', ['-R', 'u+w', dir], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`chmod -R u+w ${dir} exited with ${code}`))));
  });
}
