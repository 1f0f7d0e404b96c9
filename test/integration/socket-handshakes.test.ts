// Issue 25 item 5: customer sockets' handshakes that come while one's statement runs share the next
// (`TakeoverStore.issuedSessionJoining`): from one address every handshake took, and waited for, the same bucket row.
// Each must still get what a lone handshake gets: its refusal by the address's budget, or the state of the session it
// joins and that session's latest messages.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { TrafficLimits } from '../../core/src/chat/traffic-limits.js';
import { openDatabase } from '../../core/src/db/database.js';
import { TakeoverStore } from '../../core/src/takeover/takeover-store.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { statementsOf } from '../helpers/statements.js';

t.test('handshakes at once share a statement, each refused or answered as it would be alone', async (t) => {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 4);
  t.teardown(() => db.close());
  const agentId = randomUUID();
  await query(url, `INSERT INTO agents (id, name, agent_type, status, created_at, updated_at) VALUES ($1, 'widget', 'chat', 'active', now(), now())`, [
    agentId,
  ]);
  const session = async (issued: boolean, messages: number) => {
    const id = `session-${randomUUID()}`;
    await query(
      url,
      `INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', $3, now(), now())`,
      [id, agentId, issued],
    );
    for (let i = 0; i < messages; i++)
      await query(
        url,
        `INSERT INTO chat_messages (id, session_id, role, content, message_type, created_at) VALUES ($1, $2, $3, $4, 'text', now() + make_interval(secs => $5))`,
        [randomUUID(), id, i % 2 === 0 ? 'user' : 'assistant', `message ${i}`, i],
      );
    return id;
  };
  const talked = await session(true, 5);
  const quiet = await session(true, 0);
  const administrators = await session(false, 2);
  const store = new TakeoverStore(db);
  const traffic = new TrafficLimits(db, {
    stream_per_ip_per_minute: 0,
    stream_per_session_per_minute: 0,
    anonymous_per_minute: 0,
    socket_handshakes_per_ip_per_minute: 6,
  });
  // As a customer socket's handshake reads its session (`Takeover.issuedJoining`): ten from one address, some to the
  // same session.
  const joins = [talked, talked, quiet, administrators, `unknown-${randomUUID()}`, talked, quiet, talked, talked, quiet];
  const join = async (sessionId: string) => {
    const { buckets, refusal } = traffic.handshakeBuckets('ip-a');
    const joined = await store.issuedSessionJoining(sessionId, buckets, 3);
    return { sessionId, refusal: refusal(joined.buckets)?.refusal, session: joined.session, messages: joined.messages };
  };
  let results: Awaited<ReturnType<typeof join>>[] = [];
  const sent = await statementsOf(
    new URL(url).pathname.slice(1),
    async () => (results = await Promise.all(joins.map(join))),
    (text) => text.includes('row_to_json(st)'),
  );
  const grouped = sent.filter((text) => text.includes('take_turn_buckets(')).length;
  t.ok(grouped >= 1 && sent.length < joins.length, `10 handshakes at once took ${sent.length} statements, ${grouped} of them grouped`);

  const allowed = results.filter((r) => r.refusal === undefined);
  t.equal(allowed.length, 6, "the address's budget allows six");
  t.ok(
    results.filter((r) => r.refusal).every((r) => /handshake|connections|minute/.test(r.refusal!.detail) && r.messages.length === 0),
    'the other four are refused, with no history',
  );
  for (const r of allowed) {
    if (r.sessionId === talked) {
      t.equal(r.session?.id, talked, 'a handshake to an issued session gets its state');
      t.same(
        r.messages.map((m) => m.content),
        ['message 2', 'message 3', 'message 4'],
        'and its latest three messages, oldest first',
      );
    } else if (r.sessionId === quiet) {
      t.same([r.session?.id, r.messages], [quiet, []], 'a session without messages: its state and no history');
    } else {
      t.same([r.session, r.messages], [undefined, []], 'a session the server did not issue, or none: no state, no history');
    }
  }
  const [bucket] = await query<{ points: number }>(url, "SELECT points FROM rate_limit_buckets WHERE key LIKE '%:ip-a'");
  t.equal(bucket!.points, 10, 'the bucket counts every handshake');
});
