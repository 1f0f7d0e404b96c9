import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@agent-host/sdk';
import type { EmbeddedServer } from '../embedded-server.js';
import { lastReason, minimalEnvironment, startFailure, tailLines, terminate } from '../process/child.js';
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
  /** Where the server's port comes from: a free loopback port unless a test says otherwise. */
  port?: () => Promise<number>;
}

/** Ports tried at start-up: a free port can be taken by another process before Chroma binds it. */
const PORT_ATTEMPTS = 3;
/** How Chroma says its port was taken ("Address 127.0.0.1:43691 is not available"), or the OS does. */
const PORT_TAKEN = /Address \S+ is not available|address already in use|EADDRINUSE/i;

// Restart delays after an unexpected exit: 1 s, doubling up to 30 s; a server that ran a minute starts over at 1 s.
const RESTART_BASE_MS = 1000;
const RESTART_MAX_MS = 30_000;
const STABLE_MS = 60_000;

/**
 * A Chroma server (`chroma run`) on a free loopback port, owned by this process and supervised: when it exits
 * unexpectedly it is restarted on the same port, with backoff, so clients keep their URL.
 */
export class EmbeddedChroma implements EmbeddedServer {
  readonly name = 'Chroma';
  private child?: ChildProcess;
  private stopping = false;
  private restartTimer?: NodeJS.Timeout;
  /** Unexpected exits since the server last ran for a minute. */
  restarts = 0;
  private address = '';

  constructor(private readonly options: EmbeddedChromaOptions) {}

  async start(): Promise<void> {
    this.stopping = false;
    // The port is free when asked for, but on a busy machine another process may bind it first: another port is tried.
    for (let attempt = 1; ; attempt++) {
      const port = await (this.options.port ?? freePort)();
      try {
        return await this.launch(port);
      } catch (error) {
        if (attempt >= PORT_ATTEMPTS || !PORT_TAKEN.test((error as Error).message)) throw error;
        this.options.logger.warn({ port, attempt }, 'the port chosen for the embedded Chroma was taken before it started; trying another');
      }
    }
  }

  private async launch(port: number): Promise<void> {
    const dir = path.join(this.options.dataDir, 'chroma');
    await mkdir(dir, { recursive: true });
    await this.stopOrphan(dir);
    this.address = `http://127.0.0.1:${port}`;
    const started = Date.now();
    const child = spawn(this.options.executable, ['run', '--path', dir, '--host', '127.0.0.1', '--port', String(port)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Only what a Python server needs: the host's own environment holds its keys and database URL.
      env: { ...minimalEnvironment(), ANONYMIZED_TELEMETRY: 'False' },
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
    while (!(await chromaHeartbeat(this.address, 1000))) {
      if (spawnError || child.exitCode !== null || child.signalCode !== null) {
        this.child = undefined;
        throw await startFailure(
          `the Chroma server stopped before it answered: ${spawnError?.message ?? lastReason(tail())}`,
          tail(),
          path.join(this.options.dataDir, 'chroma-start.log'),
        );
      }
      if (Date.now() - started > this.options.startupTimeoutMs) {
        this.child = undefined;
        await terminate(child, 5000);
        throw await startFailure(
          `the Chroma server gave no heartbeat within ${this.options.startupTimeoutMs / 1000} s`,
          tail(),
          path.join(this.options.dataDir, 'chroma-start.log'),
          'a first start on a slow disk can take longer: raise [chroma] startup_timeout_seconds (AGENT_HOST__CHROMA__STARTUP_TIMEOUT_SECONDS), or set CHROMA_URL to a Chroma server',
        );
      }
      await sleep(100);
    }
    this.options.logger.info({ url: this.address, dir, ms: Date.now() - started }, 'embedded Chroma started');
    child.once('exit', (code, signal) => {
      if (this.stopping || this.child !== child) return;
      this.child = undefined;
      if (Date.now() - started > STABLE_MS) this.restarts = 0;
      this.options.logger.warn({ code, signal, restarts: this.restarts + 1 }, 'embedded Chroma exited unexpectedly; restarting it');
      this.scheduleRestart(port);
    });
  }

  private scheduleRestart(port: number): void {
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** this.restarts);
    this.restarts++;
    this.restartTimer = setTimeout(() => {
      this.launch(port).catch((error: Error) => {
        if (this.stopping) return;
        this.options.logger.error({ err: error, restarts: this.restarts }, 'embedded Chroma did not restart; trying again');
        this.scheduleRestart(port);
      });
    }, delay);
  }

  /** Resolves when the server process has exited; no restart follows. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
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
      throw new Error(
        `another host's Chroma (pid ${pid}, started by pid ${owner}) is running on ${dir}; stop that host first, or give this one another AGENT_HOST_DATA_DIR or CHROMA_URL`,
      );
    }
    this.options.logger.warn({ pid }, 'stopping a Chroma server left running by an earlier host on this data directory');
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 50 && isAlive(pid); i++) await sleep(100);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }

  /** `http://127.0.0.1:<port>`; one server holds every collection. */
  url(): string {
    return this.address;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }
}
