import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from '@agent-host/sdk';
import { exited, tailLines } from '../process/child.js';

/** The shared cache outside the clone (`AGENT_HOST_CACHE_DIR`, else `~/.cache/agent-host`). */
export function cacheDir(configured: string): string {
  if (configured) return path.resolve(configured);
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'agent-host');
}

/** The `chroma` executable inside the venv for a pinned chromadb version. */
export function chromaExecutable(cache: string, version: string): string {
  return path.join(cache, `chroma-${version}`, 'bin', 'chroma');
}

async function run(command: string, args: string[], logger: Logger): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail = tailLines(child);
  const failed = new Promise<never>((_, reject) => child.once('error', reject));
  await Promise.race([exited(child), failed]);
  if (child.exitCode !== 0) {
    throw new Error(`${command} ${args.join(' ')} exited with ${child.exitCode ?? child.signalCode}:\n${tail()}`);
  }
  logger.debug({ command, args }, 'done');
}

/**
 * Installs `chromadb==<version>` into a venv under the cache once; later calls
 * return at once. The venv is built beside its final path and renamed into
 * place, so an interrupted install is never mistaken for a finished one.
 */
export async function ensureChromaVenv(options: { cacheDir: string; version: string; python: string; logger: Logger }): Promise<string> {
  const executable = chromaExecutable(options.cacheDir, options.version);
  if (existsSync(executable)) return executable;
  const finalDir = path.join(options.cacheDir, `chroma-${options.version}`);
  const buildDir = `${finalDir}.build-${process.pid}`;
  await mkdir(options.cacheDir, { recursive: true });
  await rm(buildDir, { recursive: true, force: true });
  options.logger.info({ version: options.version, dir: finalDir }, 'installing the Chroma server (pip install chromadb), first run only');
  const started = Date.now();
  try {
    await run(options.python, ['-m', 'venv', buildDir], options.logger);
    await run(path.join(buildDir, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', `chromadb==${options.version}`], options.logger);
    if (!existsSync(executable)) await rename(buildDir, finalDir);
  } finally {
    await rm(buildDir, { recursive: true, force: true });
  }
  options.logger.info({ ms: Date.now() - started }, 'Chroma server installed');
  return executable;
}
