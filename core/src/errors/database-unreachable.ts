/** Sequelize's errors for a database it could not reach or whose connection it lost. */
const CONNECTION_ERROR =
  /^Sequelize(Connection|ConnectionRefused|ConnectionTimedOut|ConnectionAcquireTimeout|HostNotFound|HostNotReachable|InvalidConnection)Error$/;

/** Socket errors, and Postgres's "the server is shutting down, starting up or crashed" (SQLSTATE 57P01-57P03, class 08). */
const LOST_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006']);

/**
 * Whether `error` says the database could not be reached, rather than that a statement was wrong: such a request
 * changed nothing and can be retried (503 `DATABASE_UNAVAILABLE`, not a 500).
 */
export function databaseUnreachable(error: unknown): boolean {
  const e = error as { name?: string; code?: string; message?: string; original?: { code?: string; message?: string } } | undefined;
  if (!e || typeof e !== 'object') return false;
  if (CONNECTION_ERROR.test(e.name ?? '')) return true;
  const cause = e.original ?? e;
  return LOST_CODES.has(cause.code ?? '') || /Connection terminated|connection is closed|Client has encountered a connection error/i.test(cause.message ?? '');
}
