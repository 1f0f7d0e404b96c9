import type { Sequelize } from 'sequelize';

interface PooledClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}

interface ConnectionManager {
  getConnection(): Promise<PooledClient>;
  releaseConnection(connection: PooledClient): Promise<void>;
}

/**
 * As Sequelize binds them: Postgres text (and jsonb) cannot hold NUL, so a NUL in a string is stored as the two
 * characters `\0`.
 */
export const bindable = (value: unknown) => (typeof value === 'string' && value.includes('\0') ? value.replace(/\0/g, '\\0') : value);

/**
 * `value` as JSON for a `jsonb` parameter, a NUL in any of its strings stored as {@link bindable} stores it: jsonb
 * refuses `\u0000`. JSON.stringify writes a NUL as `\u0000` and a backslash as `\\`, so an escape preceded by an even
 * number of backslashes is a NUL.
 */
export function bindableJson(value: unknown): string {
  const json = JSON.stringify(value);
  return json.includes('\\u0000') ? json.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\\\0') : json;
}

/**
 * Runs `text` on one of the pool's connections as the prepared statement
 * `name`: Postgres parses and plans it once per connection instead of on every
 * call, and Sequelize's per-query formatting is skipped. Rows come back as a
 * raw Sequelize SELECT gives them (same connection, same type parsers). For
 * the statements every chat turn runs; `name` must always go with the same
 * text, and the text names its result columns (no `*`): Postgres refuses a
 * prepared statement whose result type a migration changed, so a `*` would
 * break running instances when another one adds a column.
 */
export async function preparedQuery<T>(db: Sequelize, name: string, text: string, values: unknown[]): Promise<T[]> {
  const connections = db.connectionManager as unknown as ConnectionManager;
  const client = await connections.getConnection();
  try {
    return (await client.query({ name, text, values: values.map(bindable) })).rows as T[];
  } finally {
    await connections.releaseConnection(client);
  }
}
