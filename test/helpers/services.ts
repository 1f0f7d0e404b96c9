// Access to the services the harness (test/harness/run-tests.ts) started for
// this run: a fresh database per test file on the shared Postgres server, and
// the shared Chroma server.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with \`npm test\`, which starts the shared services`);
  return value;
}

export const chromaUrl = () => required('TEST_CHROMA_URL');

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: required('TEST_PG_ADMIN_URL') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Creates an empty database, dropped when the test ends; resolves with its URL. */
export async function createTestDatabase(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  t.teardown(() => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined));
  const url = new URL(required('TEST_PG_ADMIN_URL'));
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs one query against a database URL. */
export async function query<R extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
