// Drives the job-counter fixture plugin (test/fixtures/plugins/job-counter):
// the environment that enables and configures it, and its ledger file, where
// every queued job and every run is one JSON line.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const JOB_COUNTER_DIR = fileURLToPath(new URL('../fixtures/plugins/job-counter', import.meta.url));
export const JOB_COUNTER_ID = 'job-counter';

export interface JobCounterConfig {
  ledger_file: string;
  worker?: string;
  run?: string;
  queue_count?: number;
  queue_delay_ms?: number;
  queue_interval_ms?: number;
  queue_failing?: boolean;
  delay_ms?: number;
  concurrency?: number;
  lock_lifetime_ms?: number;
}

/** `AGENT_HOST__…` overrides that enable the fixture plugin beside the default ones, with its `[plugins.job-counter]` section. */
export function jobCounterEnv(config: JobCounterConfig): Record<string, string> {
  const env: Record<string, string> = {
    AGENT_HOST_PLUGINS_EXTRA: path.resolve(JOB_COUNTER_DIR),
  };
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    // Values are read as TOML values: strings are quoted (JSON string syntax is valid TOML for these).
    env[`AGENT_HOST__PLUGINS__${JOB_COUNTER_ID.toUpperCase()}__${key.toUpperCase()}`] = typeof value === 'string' ? JSON.stringify(value) : String(value);
  }
  return env;
}

export interface LedgerEntry {
  event: 'queued' | 'start' | 'run' | 'fail-attempt' | 'queue-error';
  name: string;
  job_id: string;
  run: string;
  seq?: number;
  worker: string;
  pid: number;
  at: number;
  message?: string;
}

export async function readLedger(file: string): Promise<LedgerEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LedgerEntry);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `read` until `done` holds; rejects with `what` and the last value after `timeoutMs`. */
export async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(value).slice(0, 2000)}`);
    await sleep(100);
  }
}

/** How many times each seq 0..n-1 of `run` ran, in order. */
export function runCountsBySeq(entries: LedgerEntry[], run: string, n: number): number[] {
  const counts = Array.from({ length: n }, () => 0);
  for (const e of entries) {
    if (e.event === 'run' && e.run === run && typeof e.seq === 'number') counts[e.seq] = (counts[e.seq] ?? 0) + 1;
  }
  return counts;
}
