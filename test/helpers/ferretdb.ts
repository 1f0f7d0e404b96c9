// A FerretDB process (MongoDB wire protocol over SQLite) for one test: started
// from the binary the harness built (TEST_FERRETDB_BIN) on a free 127.0.0.1
// port with a temporary SQLite directory, and killed when the test ends.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';

interface TapLike {
  teardown(fn: () => Promise<void> | void): void;
}

export interface RunningFerretDb {
  /** `mongodb://127.0.0.1:<port>/<database>` */
  url(database: string): string;
  /** The last lines FerretDB wrote (for failure messages). */
  output(): string;
}

function ferretDbBinary(): string {
  const bin = process.env.TEST_FERRETDB_BIN;
  if (!bin) {
    throw new Error(
      'TEST_FERRETDB_BIN is not set: the MongoDB job-store tests need the FerretDB binary that test/harness/run-tests.ts builds; run them through the harness (npm test)',
    );
  }
  if (!existsSync(bin)) throw new Error(`TEST_FERRETDB_BIN=${bin} does not exist`);
  return bin;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

async function answers(url: string): Promise<boolean> {
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

/** Starts FerretDB (SQLite handler); resolves once it answers `ping`. */
export async function startFerretDb(t: TapLike, options: { extraArgs?: string[] } = {}): Promise<RunningFerretDb> {
  const bin = ferretDbBinary();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-ferretdb-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  let lastError = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freePort();
    const lines: string[] = [];
    const child = spawn(
      bin,
      [
        '--handler=sqlite',
        `--sqlite-url=file:${dir}/`,
        `--listen-addr=127.0.0.1:${port}`,
        '--debug-addr=-', // no metrics/debug listener (its default is the fixed 127.0.0.1:8088)
        `--state-dir=${dir}`, // not the working directory
        '--telemetry=disable',
        '--log-level=warn',
        ...(options.extraArgs ?? []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer) => {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      lines.splice(0, Math.max(0, lines.length - 40));
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    // No FerretDB may outlive the test process, whatever happens to the test.
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    t.teardown(async () => {
      await stopChild(child);
      process.off('exit', killOnExit);
    });
    const base = `mongodb://127.0.0.1:${port}`;
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      if (await answers(`${base}/admin`)) {
        return { url: (database) => `${base}/${database}`, output: () => lines.join('\n') };
      }
      await sleep(100);
    }
    lastError = `FerretDB (${bin}) on 127.0.0.1:${port} ${child.exitCode === null && child.signalCode === null ? 'did not answer within 15 s' : `exited with ${child.exitCode ?? child.signalCode}`}:\n${lines.join('\n')}`;
    await stopChild(child);
    if (!/address already in use/i.test(lastError)) break;
  }
  throw new Error(lastError);
}
