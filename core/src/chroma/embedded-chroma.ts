import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@agent-host/sdk';
import { tailLines, terminate } from '../process/child.js';
import { freePort } from '../process/free-port.js';
import { commandOf, isAlive, parentOf } from '../process/proc.js';

/** True when `GET <url>/api/v2/heartbeat` answers 200. */
export async function chromaHeartbeat(url: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const response = await fetch(new URL('/api/v2/heartbeat', url), { signal: AbortSignal.timeout(timeoutMs) });
    return response.ok;
  } catch {
    return false;
  }
}

export interface EmbeddedChromaOptions {
  executable: string;
  dataDir: string;
  startupTimeoutMs: number;
  logger: Logger;
}

/** A Chroma server (`chroma run`) on a free loopback port, owned by this process. */
export class EmbeddedChroma {
  private child?: ChildProcess;
  url = '';

  constructor(private readonly options: EmbeddedChromaOptions) {}

  async start(): Promise<void> {
    const dir = path.join(this.options.dataDir, 'chroma');
    await mkdir(dir, { recursive: true });
    await this.stopOrphan(dir);
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    const started = Date.now();
    const child = spawn(this.options.executable, ['run', '--path', dir, '--host', '127.0.0.1', '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ANONYMIZED_TELEMETRY: 'False' },
    });
    this.child = child;
    await writeFile(this.pidFile, String(child.pid));
    // Last resort when the host exits without stop() (an uncaught error, process.exit).
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    child.once('exit', () => process.removeListener('exit', killOnExit));
    const tail = tailLines(child);
    let spawnError: Error | undefined;
    child.once('error', (error) => (spawnError = error));
    while (!(await chromaHeartbeat(this.url, 1000))) {
      if (spawnError || child.exitCode !== null || child.signalCode !== null) {
        this.child = undefined;
        throw new Error(`Chroma server failed to start (${spawnError?.message ?? `exit ${child.exitCode ?? child.signalCode}`}):\n${tail()}`);
      }
      if (Date.now() - started > this.options.startupTimeoutMs) {
        await this.stop();
        throw new Error(`Chroma server gave no heartbeat within ${this.options.startupTimeoutMs} ms:\n${tail()}`);
      }
      await sleep(100);
    }
    this.options.logger.info({ url: this.url, dir, ms: Date.now() - started }, 'embedded Chroma started');
  }

  /** Resolves when the server process has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child) await terminate(child, 5000);
    await rm(this.pidFile, { force: true });
  }

  private get pidFile(): string {
    return path.join(this.options.dataDir, 'chroma.pid');
  }

  /**
   * A host killed with SIGKILL leaves its Chroma server running on the data
   * directory, orphaned; the next start stops it, checking the pid still names
   * a Chroma server on this directory before signalling it. One whose host is
   * alive (a second start on the same directory) refuses start-up instead:
   * stopping it would take the running host's vector store away.
   */
  private async stopOrphan(dir: string): Promise<void> {
    const pid = Number(await readFile(this.pidFile, 'utf8').catch(() => ''));
    if (!Number.isInteger(pid) || pid <= 0) return;
    const command = commandOf(pid);
    if (!command?.includes('chroma') || !command.includes(dir)) return;
    const owner = parentOf(pid);
    if (owner !== undefined && owner !== 1) {
      throw new Error(`another host's Chroma (pid ${pid}, started by pid ${owner}) is running on ${dir}; stop that host first, or give this one another AGENT_HOST_DATA_DIR or CHROMA_URL`);
    }
    this.options.logger.warn({ pid }, 'stopping a Chroma server left running by an earlier host on this data directory');
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

}
