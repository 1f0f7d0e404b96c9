// The per-minute buckets a chat turn draws from (`[rate_limits]`), taken in one statement on a real Postgres: the
// order of refusals, a refused caller not spending the shared anonymous budget, a minute that ends, the rows shared
// with the library's own takes (`MinuteBudget.take`), and the takes of several turns in one statement
// (`take_turn_buckets`, migration 0042): the same charges as one at a time, in a lock order that cannot deadlock.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import t from 'tap';
import { ConversationStore } from '../../core/src/chat/conversation-store.js';
import { TrafficLimits } from '../../core/src/chat/traffic-limits.js';
import { openDatabase } from '../../core/src/db/database.js';
import { TrafficLimitStore } from '../../core/src/chat/traffic-limit-store.js';
import { MinuteBudget } from '../../core/src/db/minute-budget.js';
import { eventually } from '../helpers/eventually.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { statementsOf } from '../helpers/statements.js';

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

t.test('sessions issued at once share a statement, which charges each bucket as takes one at a time would', async (t) => {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 4);
  t.teardown(() => db.close());
  const database = new URL(url).pathname.slice(1);
  const conversations = new ConversationStore(db);
  const traffic = new TrafficLimits(db, { ...limits, stream_per_ip_per_minute: 3, anonymous_per_minute: 5 });
  // As stage 1 admits a turn in a session the server issues (`admitTurn`): four turns from each of three clients.
  const issue = async (callerKey: string, i: number) => {
    const { buckets, refusal } = traffic.turnBuckets({ callerKey, sessionId: null, anonymous: true });
    const line = i % 2 === 0 ? { turnId: randomUUID(), instanceId: 'instance-a', seconds: 60 } : null;
    const issued = await conversations.issueSession(`issued-${i}`, null, 10, { quotaCaller: callerKey, line }, buckets);
    return { refusal: refusal(issued.buckets)?.refusal, opened: issued.opened, line };
  };
  const callers = Array.from({ length: 12 }, (_, i) => `ip-${'abc'[i % 3]}`);
  let results: Awaited<ReturnType<typeof issue>>[] = [];
  const sent = await statementsOf(
    database,
    async () => (results = await Promise.all(callers.map(issue))),
    (text) => text.includes('rate_limit_buckets') || text.includes('take_turn_buckets('),
  );
  // The first goes at once, alone, by the upserts of a lone take; the rest wait for it and go together.
  const grouped = sent.filter((text) => text.includes('take_turn_buckets(')).length;
  t.ok(grouped >= 1 && sent.length < callers.length, `12 sessions issued at once took ${sent.length} statements, ${grouped} of them grouped`);

  // Each client's fourth turn is refused by its own budget and spends nothing shared; of the nine left, the shared
  // budget allows five, whatever order the statements ran in.
  const opened = results.filter((r) => r.opened);
  t.equal(opened.length, 5, 'five sessions opened');
  t.ok(
    results.every((r) => (r.opened === undefined) === (r.refusal !== undefined)),
    'every turn is either refused or has its session',
  );
  t.equal(results.filter((r) => /3 messages a minute from one client/.test(r.refusal?.detail ?? '')).length, 3, "three refused by their client's budget");
  t.equal(results.filter((r) => /anonymous clients each minute/.test(r.refusal?.detail ?? '')).length, 4, 'four by the shared one');
  t.same(
    Object.fromEntries(
      (await query<{ key: string; points: number }>(url, 'SELECT key, points FROM rate_limit_buckets ORDER BY key', [])).map((r) => [r.key, r.points]),
    ),
    { 'turns-anonymous:all': 9, 'turns-caller:ip-a': 4, 'turns-caller:ip-b': 4, 'turns-caller:ip-c': 4 },
    'each bucket counts every take it was charged: the clients every turn, the shared one the nine their clients allowed',
  );
  const sessions = await query<{ id: string }>(url, 'SELECT id FROM chat_sessions WHERE issued_publicly ORDER BY id', []);
  t.same(
    sessions.map((s) => s.id),
    opened.map((r) => r.opened!.session.id).sort(),
    'exactly the allowed sessions are stored',
  );
  const tickets = await query<{ session_id: string; id: string }>(url, 'SELECT session_id, id::text FROM session_turn_queue ORDER BY session_id', []);
  t.same(
    tickets,
    opened
      .filter((r) => r.line)
      .map((r) => ({ session_id: r.opened!.session.id, id: r.opened!.ticketId }))
      .sort((a, b) => a.session_id.localeCompare(b.session_id)),
    'each allowed session that joins its line has its ticket, and no other session has one',
  );
  t.ok(
    opened.every((r) => r.opened!.callerTurnsToday === 0 && r.opened!.history.length === 0),
    "each comes with its caller's turns today and its (empty) history",
  );
});

t.test('turns to issued sessions at once share a statement, and a turn a budget refuses joins no line', async (t) => {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 4);
  t.teardown(() => db.close());
  const conversations = new ConversationStore(db);
  const traffic = new TrafficLimits(db, { ...limits, stream_per_ip_per_minute: 2, stream_per_session_per_minute: 5, anonymous_per_minute: 5 });
  const agentId = randomUUID();
  await query(url, `INSERT INTO agents (id, name, agent_type, status, created_at, updated_at) VALUES ($1, 'customers', 'chat', 'active', now(), now())`, [
    agentId,
  ]);
  const sessions = Array.from({ length: 8 }, (_, i) => `issued-${i}`);
  for (const id of sessions)
    await query(
      url,
      `INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', true, now(), now())`,
      [id, agentId],
    );
  // As stage 1 admits a customer's turn to its session (`admitTurn`): four clients, two sessions each.
  const admit = async (sessionId: string, i: number) => {
    const callerKey = `ip-${'abcd'[i % 4]}`;
    const { buckets, refusal } = traffic.turnBuckets({ callerKey, sessionId, anonymous: true });
    const line = { turnId: randomUUID(), instanceId: 'instance-a', seconds: 60 };
    const taken = await conversations.admitToSession(sessionId, agentId, 10, 'continue_issued', { quotaCaller: callerKey, line }, buckets);
    return { refusal: refusal(taken.buckets)?.refusal, ticketId: taken.ticketId, opened: taken.opened };
  };
  let results: Awaited<ReturnType<typeof admit>>[] = [];
  const sent = await statementsOf(
    new URL(url).pathname.slice(1),
    async () => (results = await Promise.all(sessions.map(admit))),
    (text) => text.includes('session_line_first('),
  );
  t.ok(sent.some((text) => text.includes('take_turn_buckets(')) && sent.length < sessions.length, `8 turns at once took ${sent.length} statements`);
  // Each client's two turns pass its own budget; of the eight, the shared budget allows five.
  const allowed = results.filter((r) => r.refusal === undefined);
  t.equal(allowed.length, 5, 'five turns are allowed');
  t.equal(results.filter((r) => /anonymous clients each minute/.test(r.refusal?.detail ?? '')).length, 3, 'three are refused by the shared budget');
  t.ok(
    results.every((r) => (r.ticketId === null) === (r.refusal !== undefined)),
    'every allowed turn has its ticket, and no refused one',
  );
  t.ok(
    allowed.every((r) => r.opened?.callerTurnsToday === 0),
    "each allowed turn opens its session (no line ahead), with its caller's turns today",
  );
  t.equal((await query(url, 'SELECT id FROM session_turn_queue', [])).length, 5, 'the line holds the five tickets only');
  t.same(
    Object.fromEntries(
      (
        await query<{ key: string; points: number }>(url, "SELECT key, points FROM rate_limit_buckets WHERE key NOT LIKE 'turns-session:%' ORDER BY key", [])
      ).map((r) => [r.key, r.points]),
    ),
    { 'turns-anonymous:all': 8, 'turns-caller:ip-a': 2, 'turns-caller:ip-b': 2, 'turns-caller:ip-c': 2, 'turns-caller:ip-d': 2 },
    'each bucket counts every take it was charged',
  );
});

t.test('a take of several turns charges their buckets in their order, as their takes one at a time do', async (t) => {
  const url = await createTestDatabase(t);
  // Random turns over a few keys, budgets of 1 to 3 and rows whose minute has ended, taken once by the function and
  // once turn by turn through the statement a single turn's take runs, from the same rows.
  let seed = 7;
  // An LCG's low bits repeat with short periods: its high ones are used.
  const random = (n: number) => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16) % n;
  for (let round = 0; round < 20; round++) {
    const perTurn = 1 + random(3);
    const turns = Array.from({ length: 1 + random(8) }, () =>
      Array.from({ length: perTurn }, (_, position) => ({ key: `k${position}:${random(3)}`, points: 1 + random(3) })),
    );
    const present = Array.from({ length: 3 * perTurn }, (_, i) => ({
      key: `k${Math.floor(i / 3)}:${i % 3}`,
      points: random(4),
      expired: random(4) === 0,
    })).filter(() => random(4) > 0);
    const base = Date.now();
    const reset = async () => {
      await query(url, 'DELETE FROM rate_limit_buckets', []);
      for (const row of present)
        await query(url, 'INSERT INTO rate_limit_buckets (key, points, expire) VALUES ($1, $2, $3)', [
          row.key,
          row.points,
          row.expired ? base - 1000 : base + 60_000,
        ]);
    };
    await reset();
    const rows = async () => query<{ key: string; points: number }>(url, 'SELECT key, points FROM rate_limit_buckets WHERE points > 0 ORDER BY key', []);
    const now = Date.now();
    const [grouped] = await query<{ taken_points: (number | null)[]; allowed: boolean[] }>(
      url,
      'SELECT taken_points, allowed FROM take_turn_buckets($1, $2, $3, $4, $5)',
      [turns.length, turns.flat().map((b) => b.key), turns.flat().map((b) => b.points), now, now + 60_000],
    );
    const afterGrouped = await rows();
    await reset();
    const db = openDatabase(url, 1);
    const store = new TrafficLimitStore(db);
    const single: (number | null)[] = [];
    const allowed: boolean[] = [];
    for (const buckets of turns) {
      const taken = await store.take(buckets);
      single.push(...taken.map((b) => b?.points ?? null));
      allowed.push(taken.every((b, i) => b !== null && b.points <= buckets[i]!.points));
    }
    await db.close();
    t.same(
      [grouped!.taken_points, grouped!.allowed, afterGrouped],
      [single, allowed, await rows()],
      `round ${round}: ${turns.length} turns of ${perTurn} buckets`,
    );
  }
});

t.test("a grouped take locks every turn's first bucket before any second one, as a lone take does: the two never wait on each other", async (t) => {
  const url = await createTestDatabase(t);
  const [grouped, lone] = [new pg.Client(url), new pg.Client(url)];
  await Promise.all([grouped.connect(), lone.connect()]);
  t.teardown(() => Promise.all([grouped.end(), lone.end()]));
  await query(url, `INSERT INTO rate_limit_buckets (key, points, expire) VALUES ('turns-caller:ip-a', 0, $1), ('turns-anonymous:all', 0, $1)`, [
    Date.now() + 60_000,
  ]);
  // A lone turn's take has its client's bucket and is about to take the shared one.
  await lone.query('BEGIN');
  await lone.query(`UPDATE rate_limit_buckets SET points = points + 1 WHERE key = 'turns-caller:ip-a'`);
  // Two turns' take, each with its client's bucket and then the shared one: it waits for the first client's bucket.
  await grouped.query('BEGIN');
  const now = Date.now();
  const take = grouped.query<{ taken_points: number[]; allowed: boolean[] }>('SELECT taken_points, allowed FROM take_turn_buckets($1, $2, $3, $4, $5)', [
    2,
    ['turns-caller:ip-a', 'turns-anonymous:all', 'turns-caller:ip-b', 'turns-anonymous:all'],
    [10, 10, 10, 10],
    now,
    now + 60_000,
  ]);
  const groupedPid = (grouped as unknown as { processID: number }).processID;
  await eventually(async () => {
    const [activity] = await query<{ wait_event_type: string | null }>(url, 'SELECT wait_event_type FROM pg_stat_activity WHERE pid = $1', [groupedPid]);
    return activity?.wait_event_type === 'Lock' ? true : undefined;
  }, "the grouped take to wait for the lone take's row");
  // Had it taken the shared bucket first, this would wait for it while it waits for this one's: a deadlock, which
  // Postgres ends after a second by failing one of them.
  await lone.query(`UPDATE rate_limit_buckets SET points = points + 1 WHERE key = 'turns-anonymous:all'`);
  await lone.query('COMMIT');
  const [row] = (await take).rows;
  await grouped.query('COMMIT');
  t.same(row, { taken_points: [2, 2, 1, 3], allowed: [true, true] }, 'the lone take went through, and the grouped one after it');
});
