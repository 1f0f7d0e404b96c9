// A fault of the fault suite (issue 17): the database becomes unreachable while the host serves. A TCP relay between
// the host and the shared Postgres is cut and restored; while it is cut, readiness says so and every request that
// needs the database is a 503 DATABASE_UNAVAILABLE with Retry-After (never a 500) that changed nothing; once it is
// restored the host serves again without a restart.
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { startRelay } from '../helpers/relay.js';
import { createTestDatabase } from '../helpers/services.js';

t.test('a database that goes away mid-service: 503 with Retry-After while away, nothing half-done, served again after', async (t) => {
  const direct = new URL(await createTestDatabase(t));
  const relay = await startRelay({ host: direct.hostname, port: Number(direct.port) });
  t.teardown(() => relay.close());
  const relayed = new URL(direct);
  relayed.port = String(relay.port);
  const host = await startTestHost(t, { databaseUrl: relayed.toString() });
  const admin = new AdminClient(host.url);
  await admin.login();
  const before = (await admin.request('POST', '/agents', { name: 'Before the outage', agent_type: 'chat' })).status;
  t.equal(before, 201, 'the host serves through the relay');

  relay.cut();
  const readiness = await waitFor(
    'readiness to notice',
    () => fetch(`${host.url}/readyz`),
    (r) => r.status === 503,
    15_000,
  );
  t.ok(
    ((await readiness.json()) as { failing: { name: string }[] }).failing.some((f) => f.name === 'postgres'),
    'readiness names postgres',
  );
  for (const [method, path, body] of [
    ['POST', '/agents', { name: 'During the outage', agent_type: 'chat' }],
    ['GET', '/agents', undefined],
    ['GET', '/admin/auth/me', undefined],
  ] as const) {
    const refused = await admin.request(method, path, body);
    t.equal(refused.status, 503, `${method} ${path} is a 503, not a 500`);
    t.equal(refused.body.code, 'DATABASE_UNAVAILABLE', 'with its code');
    t.equal(refused.headers.get('retry-after'), '5', 'and when to try again');
  }
  const login = await new AdminClient(host.url).login();
  t.equal(login.status, 503, 'a login cannot be checked either, and is not refused as a wrong password');
  t.equal((await fetch(`${host.url}/healthz`)).status, 200, 'liveness still answers');

  relay.restore();
  await waitFor(
    'readiness to return',
    () => fetch(`${host.url}/readyz`),
    (r) => r.status === 200,
    30_000,
  );
  const after = await admin.request('POST', '/agents', { name: 'After the outage', agent_type: 'chat' });
  t.equal(after.status, 201, 'the same session writes again, without a restart');
  const names = (await admin.request('GET', '/agents')).body.items.map((a: { name: string }) => a.name).sort();
  t.same(names, ['After the outage', 'Before the outage'], 'the write refused during the outage changed nothing');
});
