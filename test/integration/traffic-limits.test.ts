// The per-minute buckets a chat turn draws from (`[rate_limits]`), taken in one statement on a real Postgres: the
// order of refusals, a refused caller not spending the shared anonymous budget, a minute that ends, and the rows
// shared with the library's own takes (`MinuteBudget.take`).
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { TrafficLimits } from '../../core/src/chat/traffic-limits.js';
import { openDatabase } from '../../core/src/db/database.js';
import { MinuteBudget } from '../../core/src/db/minute-budget.js';
import { createTestDatabase, query } from '../helpers/services.js';

const limits = { stream_per_ip_per_minute: 2, stream_per_session_per_minute: 3, anonymous_per_minute: 4, socket_handshakes_per_ip_per_minute: 0 };

t.test('a turn takes the caller, session and anonymous buckets in one statement, each only while those before allow it', async (t) => {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 2);
  t.teardown(() => db.close());
  const traffic = new TrafficLimits(db, limits);
  const points = async () =>
    Object.fromEntries(
      (await query<{ key: string; points: number }>(url, 'SELECT key, points FROM rate_limit_buckets ORDER BY key', [])).map((r) => [r.key, r.points]),
    );
  const session = randomUUID();
  const turn = (callerKey: string, sessionId: string | null = null) => traffic.takeTurn({ callerKey, sessionId, anonymous: true });

  t.equal(await turn('ip-a', session), undefined, 'a first turn passes');
  t.equal(await turn('ip-a', session), undefined, 'a second one too');
  const refused = await turn('ip-a', session);
  t.match(refused?.detail, /2 messages a minute from one client/, 'the third from one client is refused by its own budget');
  t.ok(refused!.retryAfterSeconds >= 1 && refused!.retryAfterSeconds <= 60, `with Retry-After within the minute (${refused?.retryAfterSeconds} s)`);
  t.same(
    await points(),
    { 'turns-anonymous:all': 2, 'turns-caller:ip-a': 3, [`turns-session:${session}`]: 2 },
    'the refused turn spent neither the session budget nor the shared one',
  );

  t.equal(await turn('ip-b', session), undefined, 'another client in the same session passes');
  t.match((await turn('ip-c', session))?.detail, /3 messages a minute in one session/, 'until the session budget is spent');
  t.equal((await points())['turns-anonymous:all'], 3, 'which spent nothing shared either');
  t.equal(await turn('ip-d'), undefined, 'a turn without a session takes no session bucket');
  t.match((await turn('ip-e'))?.detail, /anonymous clients each minute/, 'the fifth anonymous turn passes no client budget but the shared one');
  t.equal(await traffic.takeTurn({ callerKey: 'ip-f', sessionId: null, anonymous: false }), undefined, 'a signed-in caller does not draw from it');

  await query(url, `UPDATE rate_limit_buckets SET expire = $1 WHERE key = 'turns-caller:ip-a'`, [Date.now() - 1]);
  t.equal(await traffic.takeTurn({ callerKey: 'ip-a', sessionId: null, anonymous: false }), undefined, 'a bucket whose minute ended starts again');
  t.equal((await points())['turns-caller:ip-a'], 1, 'at one');
});

t.test('the library and the combined statement count in the same rows', async (t) => {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 2);
  t.teardown(() => db.close());
  const traffic = new TrafficLimits(db, { ...limits, anonymous_per_minute: 0 });
  const sameBudget = new MinuteBudget(db, 'turns-caller', 2, '2 messages a minute from one client');
  t.equal(await sameBudget.take('ip-a'), undefined, 'a take through rate-limiter-flexible');
  t.equal(await traffic.takeTurn({ callerKey: 'ip-a', sessionId: null, anonymous: true }), undefined, 'then one in the combined statement');
  t.ok(await sameBudget.take('ip-a'), 'and the library sees the budget spent');
  t.same(await query(url, 'SELECT key FROM rate_limit_buckets ORDER BY key', []), [{ key: 'turns-caller:ip-a' }], 'an anonymous budget of 0 writes no row');
});
