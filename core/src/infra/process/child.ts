import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';

/** Resolves once `child` has exited. */
export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = exited(child);
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await gone;
  clearTimeout(timer);
}

/** Keeps the last `max` lines a child printed, for error messages. */
export function tailLines(child: ChildProcess, max = 40): () => string {
  const lines: string[] = [];
  const push = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      lines.push(line);
      if (lines.length > max) lines.shift();
    }
  };
  child.stdout?.on('data', push);
  child.stderr?.on('data', push);
  return () => lines.join('\n');
}

/** The variables a child server needs to run (locale, paths, temp), none of the host's configuration or secrets. */
export function minimalEnvironment(): Record<string, string> {
  const keep = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TMPDIR', 'TZ'];
  return Object.fromEntries(keep.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]!]])));
}

/**
 * A start-up failure said in one line (what happened, and what to do when `hint` knows), with the child's full
 * output kept in `logFile` for whoever needs more.
 */
export async function startFailure(what: string, output: string, logFile: string, hint?: string): Promise<Error> {
  const kept = await writeFile(logFile, output.endsWith('\n') ? output : `${output}\n`).then(
    () => true,
    () => false,
  );
  return new Error(`${what}${hint ? `; ${hint}` : ''}${kept ? ` (its output: ${logFile})` : ''}`);
}

/** The last line of `output` that says what went wrong (a FATAL or ERROR line, else the last line). */
export function lastReason(output: string): string {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const reason = lines.findLast((line) => /\b(FATAL|PANIC|ERROR|Error|error):/.test(line)) ?? lines.at(-1) ?? 'no output';
  return reason.replace(/^.*?\b(FATAL|PANIC|ERROR):\s*/, '');
}
