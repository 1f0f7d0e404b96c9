import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '@agent-host/sdk';
import { exited, lastReason, startFailure, tailLines } from './child.js';

/** The package a pip output line starts to fetch (`Collecting onnxruntime>=1.14.1`, `Downloading tokenizers-0.21...whl`). */
export function pipPackageOf(line: string): string | undefined {
  return /^\s*(?:Collecting|Downloading) ([A-Za-z0-9_.-]+)/.exec(line)?.[1];
}

/** Runs a step of the install; a failure is one line naming the step, with its output kept in `logFile`. */
async function run(command: string, args: string[], logger: Logger, logFile: string, missingPython: string, onLine?: (line: string) => void): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail = tailLines(child);
  if (onLine) child.stdout?.on('data', (chunk: Buffer) => chunk.toString('utf8').split('\n').forEach(onLine));
  const failed = new Promise<never>((_, reject) => child.once('error', reject));
  try {
    await Promise.race([exited(child), failed]);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new Error(`${command} was not found: ${missingPython}`, { cause: error });
    }
    throw error;
  }
  if (child.exitCode !== 0) {
    throw await startFailure(`${path.basename(command)} ${args.slice(0, 3).join(' ')} failed: ${lastReason(tail())}`, tail(), logFile);
  }
  logger.debug({ command, args }, 'done');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Holds `<dir>.lock` (a directory, created atomically) while `work` runs; waits for other holders. */
async function withLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const lock = `${dir}.lock`;
  for (;;) {
    try {
      await mkdir(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (await stat(lock).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs;
      if (age > 15 * 60_000)
        await rm(lock, { recursive: true, force: true }); // left by a killed installer
      else await sleep(500);
    }
  }
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** A Python tool installed with pip into a venv of its own under the cache. */
export interface PipTool {
  /** The venv's directory name under the cache, and the name in log lines: `chroma-1.5.9`. */
  name: string;
  /** What pip installs: `chromadb==1.5.9`. */
  requirement: string;
  /** The executable wanted, under the venv's `bin/`. */
  bin: string;
  /** What to do when the Python interpreter is missing, for the one-line error. */
  missingPython: string;
}

/** The executable of `tool` under the cache, installed or not. */
const pipToolExecutable = (cache: string, tool: Pick<PipTool, 'name' | 'bin'>) => path.join(cache, tool.name, 'bin', tool.bin);

/**
 * Installs `tool` into a venv under the cache once; later calls return at
 * once. A venv cannot be moved after it is built, so it is built in place and
 * marked complete last: a half-built one is removed and rebuilt. Concurrent
 * installers (parallel test runs) wait on a lock.
 */
export async function ensurePipTool(tool: PipTool, options: { cacheDir: string; python: string; logger: Logger }): Promise<string> {
  const executable = pipToolExecutable(options.cacheDir, tool);
  const venv = path.join(options.cacheDir, tool.name);
  const marker = path.join(venv, '.agent-host-complete');
  if (existsSync(marker)) return executable;
  await mkdir(options.cacheDir, { recursive: true });
  return withLock(venv, async () => {
    if (existsSync(marker)) return executable;
    await rm(venv, { recursive: true, force: true });
    options.logger.info({ requirement: tool.requirement, dir: venv }, `installing ${tool.requirement} (pip), first run only`);
    const started = Date.now();
    // Beside the venv, which a failed install removes.
    const logFile = `${venv}-install.log`;
    try {
      await run(options.python, ['-m', 'venv', venv], options.logger, logFile, tool.missingPython);
      // A minute of pip is not silent: at most one progress line every 3 s, naming what is being fetched.
      let fetched = 0;
      let lastReport = 0;
      const progress = (line: string) => {
        const name = pipPackageOf(line);
        if (!name) return;
        fetched++;
        if (Date.now() - lastReport < 3000) return;
        lastReport = Date.now();
        options.logger.info(
          { package: name, fetched, s: Math.round((Date.now() - started) / 1000) },
          `installing ${tool.requirement}: fetching ${name} (${fetched} so far)`,
        );
      };
      await run(
        path.join(venv, 'bin', 'pip'),
        ['install', '--progress-bar', 'off', '--disable-pip-version-check', tool.requirement],
        options.logger,
        logFile,
        tool.missingPython,
        progress,
      );
    } catch (error) {
      await rm(venv, { recursive: true, force: true });
      throw error;
    }
    await writeFile(marker, new Date().toISOString() + '\n');
    options.logger.info({ ms: Date.now() - started }, `${tool.requirement} installed`);
    return executable;
  });
}
