import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EmbeddedServer } from '../embedded-server.js';
import { minimalEnvironment, tailLines, terminate } from '../process/child.js';
import { freePort } from '../process/free-port.js';

export interface EmbeddedFerretDbOptions {
  /** The `ferretdb` binary ({@link ensureFerretDb}). */
  binary: string;
  /** Directory of its SQLite databases and state; the caller creates and removes it. */
  dataDir: string;
  startupTimeoutMs?: number;
  /** More command-line flags, for tests of a misbehaving server. */
  extraArgs?: string[];
}

/** Start attempts: a free port can be taken by another process between choosing it and FerretDB binding it. */
const ATTEMPTS = 3;

async function answers(url: string): Promise<boolean> {
  // The driver is loaded here, not when core is imported: only a FerretDB start needs it.
  const { MongoClient } = await import('mongodb');
  const client = new MongoClient(url, { serverSelectionTimeoutMS: 500, connectTimeoutMS: 500 });
  try {
    await client.connect();
    await client.db('admin').command({ ping: 1 });
    return true;
  } catch {
    return false;
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** A FerretDB server (SQLite handler) on a free loopback port, answering the MongoDB wire protocol. */
export class EmbeddedFerretDb implements EmbeddedServer {
  readonly name = 'FerretDB';
  private child?: ChildProcess;
  private base = '';
  private lines: () => string = () => '';
  // No FerretDB may outlive the process that started it, whatever happens to that process.
  private readonly killOnExit = () => this.child?.kill('SIGKILL');

  constructor(private readonly options: EmbeddedFerretDbOptions) {}

  async start(): Promise<void> {
    const timeoutMs = this.options.startupTimeoutMs ?? 15_000;
    let failure = '';
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const port = await freePort();
      const { dataDir } = this.options;
      const child = spawn(
        this.options.binary,
        [
          '--handler=sqlite',
          `--sqlite-url=file:${dataDir}/`,
          `--listen-addr=127.0.0.1:${port}`,
          '--debug-addr=-', // no metrics/debug listener (its default is the fixed 127.0.0.1:8088)
          `--state-dir=${dataDir}`, // not the working directory
          '--telemetry=disable',
          '--log-level=warn',
          ...(this.options.extraArgs ?? []),
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], env: minimalEnvironment() },
      );
      this.child = child;
      this.lines = tailLines(child);
      process.once('exit', this.killOnExit);
      this.base = `mongodb://127.0.0.1:${port}`;
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline && child.exitCode === null && child.signalCode === null; await sleep(100)) {
        if (await answers(this.url('admin'))) return;
      }
      const running = child.exitCode === null && child.signalCode === null;
      failure = `FerretDB (${this.options.binary}) on 127.0.0.1:${port} ${running ? `did not answer within ${timeoutMs / 1000} s` : `exited with ${child.exitCode ?? child.signalCode}`}:\n${this.output()}`;
      await this.stop();
      if (!/address already in use/i.test(failure)) break;
    }
    throw new Error(failure);
  }

  async stop(): Promise<void> {
    if (this.child) await terminate(this.child, 5_000);
    process.off('exit', this.killOnExit);
  }

  /** `mongodb://127.0.0.1:<port>/<database>`. */
  url(database = 'admin'): string {
    return `${this.base}/${database}`;
  }

  /** The last lines it wrote, for failure messages. */
  output(): string {
    return this.lines();
  }
}
