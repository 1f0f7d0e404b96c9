import pg from 'pg';
import type { Sequelize } from 'sequelize';

/**
 * Runs `work` while holding a session-level Postgres advisory lock on a
 * connection of its own, so host instances sharing a database take turns at
 * start-up steps that are not safe to run at once (migrations, job-store
 * schema creation).
 */
export async function withAdvisoryLock<T>(sequelize: Sequelize, key: string, work: () => Promise<T>): Promise<T> {
  const { host, port, database, username, password } = sequelize.config;
  const lock = new pg.Client({ host, port: Number(port), database, user: username, password: password ?? undefined });
  // A connection lost while the lock is held fails the work's own queries; unheard, the client's 'error' event would
  // end the process instead.
  lock.on('error', () => undefined);
  await lock.connect();
  try {
    await lock.query('SELECT pg_advisory_lock(hashtext($1))', [key]);
    return await work();
  } finally {
    await lock.end();
  }
}
