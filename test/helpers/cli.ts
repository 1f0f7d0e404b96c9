import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BOOTSTRAP_ADMIN } from './host.js';
import { chromaUrl } from './services.js';
import { commandOf as procCommand, isAlive, parentOf } from '../../core/src/infra/process/proc.js';

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
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exit };
}

/** Runs the CLI to its end with `input` on a piped stdin; `output` is stdout and stderr together. */
export function runWithStdin(args: string[], env: NodeJS.ProcessEnv, input: string): Promise<{ code: number | null; stdout: string; output: string }> {
  const child = spawn(process.execPath, ['--no-deprecation', CLI, ...args], { cwd: PROJECT_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let output = '';
  child.stdout.on('data', (c: Buffer) => ((stdout += c.toString()), (output += c.toString())));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  child.stdin.end(input);
  // 'close', not 'exit': it waits for the output streams to end.
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, output })));
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

export interface TapLike {
  teardown(fn: () => Promise<void> | void): void;
}

/**
 * Starts one `agent-host start` process on a shared database (the shared
 * Chroma, one signing key, the test super admin) with `env` on top; resolves
 * with its URL and process once it serves. Stopped with SIGTERM when the
 * test ends (a test may kill it sooner).
 */
export async function startHostProcess(
  t: TapLike,
  databaseUrl: string,
  env: Record<string, string> = {},
  name = 'host',
): Promise<{ url: string; run: CliRun }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), `agent-host-${name}-`));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const run = runCli(['start'], {
    ...process.env,
    APP_ENV: 'test',
    LOG_LEVEL: 'warn',
    PORT: '0',
    DATABASE_URL: databaseUrl,
    CHROMA_URL: chromaUrl(),
    AGENT_HOST_DATA_DIR: dataDir,
    ADMIN_ACCESS_TOKEN_SECRET_KEY: 'shared-signing-key-for-every-instance-0123456789',
    ADMIN_BOOTSTRAP_USERNAME: BOOTSTRAP_ADMIN.username,
    ADMIN_BOOTSTRAP_PASSWORD: BOOTSTRAP_ADMIN.password,
    ...env,
  });
  t.teardown(async () => {
    run.child.kill('SIGTERM');
    await run.exit;
  });
  return { url: await servingUrl(run), run };
}

/** Starts `count` host processes on one shared database, all at once (see {@link startHostProcess}); resolves with their URLs. */
export async function startHostProcesses(t: TapLike, databaseUrl: string, count: number, env: Record<string, string> = {}): Promise<string[]> {
  return Promise.all(Array.from({ length: count }, async (_, i) => (await startHostProcess(t, databaseUrl, env, String(i))).url));
}

/** Every live descendant of `root`. */
export function descendants(root: number): number[] {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
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
