import { AsyncResource } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { Sequelize } from 'sequelize';

/** Opens the core database with a pool sized by `[database].pool_max`; logs nothing per query. */
export function openDatabase(url: string, poolMax: number): Sequelize {
  const sequelize = new Sequelize(url, {
    dialect: 'postgres',
    logging: false,
    pool: { max: poolMax, min: 0, idle: 10_000, acquire: 30_000 },
  });
  keepContextInTransactions(sequelize);
  return sequelize;
}

/**
 * The pool hands a connection to a waiting transaction from whichever code released it, so a transaction's callback
 * would run in that code's async context: another request's id in the audit rows and log lines it writes. Bound to
 * the caller's context, it runs in its own request's.
 */
function keepContextInTransactions(sequelize: Sequelize): void {
  const transaction = sequelize.transaction.bind(sequelize) as (...args: unknown[]) => Promise<unknown>;
  sequelize.transaction = ((...args: unknown[]) =>
    transaction(...args.map((arg) => (typeof arg === 'function' ? AsyncResource.bind(arg as (...a: unknown[]) => unknown) : arg)))) as Sequelize['transaction'];
}

/**
 * A hash of host, port and database name, for telling deployments apart in
 * `/healthz` without revealing credentials.
 */
export function databaseFingerprint(url: string): string {
  const parsed = new URL(url);
  const identity = `${parsed.hostname}:${parsed.port || '5432'}/${decodeURIComponent(parsed.pathname.replace(/^\//, ''))}`;
  return createHash('sha256').update(identity).digest('hex').slice(0, 16);
}

/** The database URL with its password removed, for log lines. */
export function redactUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
