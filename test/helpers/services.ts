// Access to the services the harness (test/harness/run-tests.ts) started for
// this run: a fresh database per test file on the shared Postgres server (a copy
// of the run's migrated template), and the shared Chroma server.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite with \`npm test\`, which starts the shared services`);
  return value;
}

export const chromaUrl = () => required('TEST_CHROMA_URL');
export const chromiumBin = () => required('TEST_CHROMIUM_BIN');

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: required('TEST_PG_ADMIN_URL') });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates a database, dropped when the test ends; resolves with its URL. It is a copy of the run's migrated template
 * (the harness migrates one database once), or with `empty` a database with no tables, for tests of the migrations.
 */
export async function createTestDatabase(t: { teardown(fn: () => Promise<void>): void }, options: { empty?: boolean } = {}): Promise<string> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  const template = options.empty ? undefined : process.env.TEST_PG_TEMPLATE;
  await admin((c) => c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`));
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
