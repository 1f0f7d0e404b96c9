// A pg connection that Postgres drops while it sits between statements (a restart, a crash) must not end the host:
// hearLostConnections gives every pg Client of the process a listener, so one opened by a library without its own is
// logged, and the process goes on.
import pg from 'pg';
import t from 'tap';
import type { Logger } from '@agent-host/sdk';
import { hearLostConnections } from '../../core/src/db/lost-connections.js';
import { createTestDatabase, query } from '../helpers/services.js';

t.test('an idle client without a listener of its own, dropped by the server, is logged, not fatal', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const records: { level: string; msg: string }[] = [];
  const logger: Logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (_fields: object | string, msg?: string) => void records.push({ level: 'warn', msg: msg ?? '' }),
    error: () => undefined,
    child: () => logger,
  };
  hearLostConnections(logger);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
  t.equal(client.listenerCount('error'), 1, 'the client hears its errors');
  const ended = new Promise((resolve) => client.once('end', resolve));
  await query(databaseUrl, 'SELECT pg_terminate_backend($1)', [pid]);
  await ended;
  t.match(records, [{ level: 'warn', msg: 'a Postgres connection was lost' }], 'logged once');
  await t.rejects(client.query('SELECT 1'), 'the client is done; its owner sees the next query fail');
});
