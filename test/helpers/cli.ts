import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandOf as procCommand, isAlive, parentOf } from '../../core/src/process/proc.js';

export const alive = isAlive;

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(PROJECT_ROOT, 'host', 'dist', 'cli.js');

/** The environment without the shared test services, so the CLI starts its own embedded ones. */
export function embeddedEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    APP_ENV: 'test',
    LOG_LEVEL: 'warn',
    PORT: '0',
    ADMIN_ACCESS_TOKEN_SECRET_KEY: 'e2e-signing-key-with-enough-entropy-0123456789',
    ...overrides,
  };
  delete env.DATABASE_URL;
  delete env.CHROMA_URL;
  return env;
}

export interface CliRun {
  child: ChildProcess;
  output: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function runCli(args: string[], env: NodeJS.ProcessEnv): CliRun {
  const child = spawn(process.execPath, ['--no-deprecation', CLI, ...args], { cwd: PROJECT_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output += c.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, output: () => output, exit };
}

/** Waits for the banner line and resolves with the URL the host serves on. */
export async function servingUrl(run: CliRun, timeoutMs = 180_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = /agent-host is serving on (http:\/\/\S+)/.exec(run.output());
    if (match) return match[1]!;
    if (run.child.exitCode !== null) throw new Error(`host exited (${run.child.exitCode}) before serving:\n${run.output()}`);
    if (Date.now() > deadline) throw new Error(`host did not start in ${timeoutMs} ms:\n${run.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every live descendant of `root`. */
export function descendants(root: number): number[] {
  const all = readdirSync('/proc').filter((d) => /^\d+$/.test(d)).map(Number);
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length) {
    const children = all.filter((pid) => frontier.includes(parentOf(pid) ?? -1));
    found.push(...children);
    frontier = children;
  }
  return found;
}

/** Command line of a process, for messages. */
export const commandOf = (pid: number): string => procCommand(pid) ?? '(gone)';
