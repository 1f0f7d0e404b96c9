// The per-minute buckets a chat turn draws from (`[rate_limits]`), taken in one statement on a real Postgres: the
// order of refusals, a refused caller not spending the shared anonymous budget, a minute that ends, and the rows
// shared with the library's own takes (`MinuteBudget.take`).
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ConversationStore } from '../../core/src/chat/conversation-store.js';
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

t.test("with a place in a session's line, the same statement takes the ticket only when every bucket allows the turn", async (t) => {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 2);
  t.teardown(() => db.close());
  const session = randomUUID();
  await query(url, `INSERT INTO chat_sessions (id, status, created_at, updated_at) VALUES ($1, 'AI_ACTIVE', now(), now())`, [session]);
  const tickets = async () => (await query<{ id: string }>(url, 'SELECT id::text FROM session_turn_queue ORDER BY id', [])).map((r) => r.id);
  const conversations = new ConversationStore(db);
  // As stage 1 takes a turn to a session it continues (`admitTurn`): its buckets, its ticket and, when first, the session.
  const admit = async (traffic: TrafficLimits, callerKey: string, sessionId: string) => {
    const { buckets, refusal } = traffic.turnBuckets({ callerKey, sessionId, anonymous: true });
    const line = { turnId: randomUUID(), instanceId: 'instance-a', seconds: 60 };
    const taken = await conversations.admitToSession(sessionId, null, 10, 'choose', { quotaCaller: null, line }, buckets);
    return { refusal: refusal(taken.buckets)?.refusal, ticketId: taken.ticketId };
  };

  const traffic = new TrafficLimits(db, limits);
  const first = await admit(traffic, 'ip-a', session);
  t.same(await tickets(), [first.ticketId], 'a turn the buckets allow gets its ticket');
  t.equal((await admit(traffic, 'ip-a', session)).refusal, undefined, 'a second one too');
  const refused = await admit(traffic, 'ip-a', session);
  t.match(refused.refusal?.detail, /2 messages a minute from one client/, 'the third from one client is refused by its own budget');
  t.equal(refused.ticketId, null, 'and joins no line');
  t.equal((await tickets()).length, 2, 'none was taken');
  const lastAllowed = await admit(traffic, 'ip-b', session);
  const afterSession = await admit(traffic, 'ip-c', session);
  t.equal(lastAllowed.refusal, undefined, 'another client takes the last turn of the session budget');
  t.match(afterSession.refusal?.detail, /3 messages a minute in one session/, 'then the session budget refuses');
  t.equal((await tickets()).length, 3, 'a turn refused by its session budget joins no line either');
  const other = randomUUID();
  await query(url, `INSERT INTO chat_sessions (id, status, created_at, updated_at) VALUES ($1, 'AI_ACTIVE', now(), now())`, [other]);
  t.equal((await admit(traffic, 'ip-d', other)).refusal, undefined, 'the fourth anonymous turn passes');
  const shared = await admit(traffic, 'ip-e', other);
  t.match(shared.refusal?.detail, /anonymous clients each minute/, 'the fifth is refused by the shared budget, the last one it takes');
  t.equal((await tickets()).length, 4, 'and joins no line');

  const unlimited = new TrafficLimits(db, { ...limits, stream_per_ip_per_minute: 0, stream_per_session_per_minute: 0, anonymous_per_minute: 0 });
  const free = await admit(unlimited, 'ip-a', session);
  t.equal(free.refusal, undefined, 'with no budget to take');
  t.equal((await tickets()).at(-1), free.ticketId, 'the statement still takes the ticket');
});
