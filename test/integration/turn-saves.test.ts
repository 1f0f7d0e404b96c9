// Issue 25 item 2: turns that end while another is being stored share one statement (ConversationStore.persistTurn),
// each still stored whole or not at all, on the real Postgres of the test run.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ConversationStore, type TurnRecord } from '../../core/src/chat/conversation-store.js';
import { openDatabase } from '../../core/src/db/database.js';
import { EMPTY_COST } from '../../core/src/usage/cost.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { sentStatementsOf } from '../helpers/statements.js';

async function setUp(t: { teardown(fn: () => unknown): void }) {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 4);
  t.teardown(() => db.close());
  const database = new URL(url).pathname.slice(1);
  const store = new ConversationStore(db);
  /** Sessions, each with a live ticket in its line; their ids and tickets. */
  const sessions = async (n: number) =>
    Promise.all(
      Array.from({ length: n }, async () => {
        const id = `session-${randomUUID()}`;
        await query(
          url,
          `INSERT INTO chat_sessions (id, status, created_at, updated_at) VALUES ($1, 'AI_ACTIVE', now() - interval '1 hour', now() - interval '1 hour')`,
          [id],
        );
        const [ticket] = await query<{ id: string }>(
          url,
          `INSERT INTO session_turn_queue (session_id, turn_id, instance_id, expires_at, created_at) VALUES ($1, $2, 'test', now() + interval '1 minute', now()) RETURNING id::text AS id`,
          [id, randomUUID()],
        );
        return { id, ticket: ticket!.id };
      }),
    );
  /** The statements that store turns, sent while `work` runs: the ids of the turns each stores (its one parameter). */
  const saves = async (work: () => Promise<unknown>) =>
    (await sentStatementsOf(database, work, (text) => /\bINSERT INTO conversation_turns\b/.test(text))).map((s) =>
      (JSON.parse(s.values[0] as string) as { turn_id: string }[]).map((row) => row.turn_id),
    );
  return { url, store, sessions, saves };
}

function turnOf(session: { id: string; ticket: string | null }, text: string, extra: Partial<TurnRecord> = {}): TurnRecord {
  return {
    turn_id: randomUUID(),
    session_id: session.id,
    agent_id: null,
    message_type: 'text',
    user_message: { id: randomUUID(), created_at: new Date().toISOString() },
    user_text: text,
    reply: `re: ${text}`,
    reply_metadata: null,
    orchestrator_key: 'default_chat_v1',
    response_source: 'llm_generated',
    status: 'completed',
    error_message: null,
    model: { model_name: 'gpt-test', model_provider: 'openai', model_temperature: 0.2 },
    usage: { input_tokens: 3, output_tokens: 5, total_tokens: 8, token_usage_source: 'provider_reported' },
    cost: EMPTY_COST,
    counts_toward_limits: true,
    caller_key: null,
    trace_id: randomUUID().replace(/-/g, ''),
    first_token_ms: 4,
    latency_ms: 9,
    context: { text },
    override: null,
    time_zone: null,
    ticket_id: session.ticket,
    ...extra,
  };
}

t.test('turns that end while others are stored go together, each stored whole, its own messages returned', async (t) => {
  const { url, store, sessions, saves } = await setUp(t);
  const open = await sessions(10);
  const turns = open.map((session, i) =>
    turnOf(session, `question ${i}`, {
      override: i === 5 ? { model_name: 'override-model', model_provider: 'openai', model_temperature: 0.7 } : null,
      time_zone: i === 6 ? 'Europe/Paris' : null,
      reply: i === 7 ? null : i === 3 ? 'Answer:\0nul' : `re: ${i}`,
      ...(i === 3 && { context: { reply: 'Answer:\0nul' } }),
    }),
  );
  let stored: Awaited<ReturnType<ConversationStore['persistTurn']>>[] = [];
  const statements = await saves(async () => {
    stored = await Promise.all(turns.map((turn) => store.persistTurn(turn)));
  });
  t.same(
    statements,
    [[turns[0]!.turn_id], turns.slice(1).map((turn) => turn.turn_id)],
    'ten turns ending at once: the first is stored at once, alone, and the nine that waited in one statement',
  );

  for (const [i, turn] of turns.entries()) {
    t.same(
      stored[i]!.map((m) => [m.turn_id, m.session_id, m.role]),
      turn.reply === null
        ? [[turn.turn_id, turn.session_id, 'user']]
        : [
            [turn.turn_id, turn.session_id, 'user'],
            [turn.turn_id, turn.session_id, 'assistant'],
          ],
      `turn ${i} gets its own messages, oldest first`,
    );
  }
  t.equal(stored[3]![1]!.content, 'Answer:\\0nul', "a NUL in a model's reply is stored as the two characters \\0, in a batch as alone");

  const [counts] = await query<{ turns: number; messages: number; snapshots: number; tickets: number }>(
    url,
    `SELECT (SELECT count(*)::int FROM conversation_turns) AS turns, (SELECT count(*)::int FROM chat_messages) AS messages,
            (SELECT count(*)::int FROM turn_context_snapshots) AS snapshots, (SELECT count(*)::int FROM session_turn_queue) AS tickets`,
  );
  t.same(counts, { turns: 10, messages: 19, snapshots: 10, tickets: 0 }, 'every turn, message and snapshot is stored, and every ticket has left its line');
  const [turn5] = await query(url, 'SELECT model_name, input_tokens, latency_ms, assistant_message_id FROM conversation_turns WHERE id = $1', [
    turns[5]!.turn_id,
  ]);
  t.same(
    turn5,
    { model_name: 'gpt-test', input_tokens: 3, latency_ms: 9, assistant_message_id: stored[5]![1]!.id },
    "each turn row holds its own figures and its reply's id",
  );
  const rows = await query<{ id: string; model_name: string | null; time_zone: string | null; moved: boolean }>(
    url,
    `SELECT id, model_name, time_zone, updated_at > now() - interval '1 minute' AS moved FROM chat_sessions`,
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  t.equal(byId.get(open[5]!.id)!.model_name, 'override-model', "a turn's model override is stored on its own session");
  t.equal(byId.get(open[6]!.id)!.time_zone, 'Europe/Paris', "a turn's time zone too");
  t.same(
    rows
      .filter((r) => r.model_name !== null || r.time_zone !== null)
      .map((r) => r.id)
      .sort(),
    [open[5]!.id, open[6]!.id].sort(),
    'and no other session gets them',
  );
  t.ok(
    rows.every((r) => r.moved),
    "every session's updated_at moved",
  );
  const [snapshot] = await query(url, 'SELECT context FROM turn_context_snapshots WHERE turn_id = $1', [turns[8]!.turn_id]);
  t.same(snapshot, { context: { text: 'question 8' } }, 'each snapshot holds its own context');
  const [withNul] = await query(url, 'SELECT context FROM turn_context_snapshots WHERE turn_id = $1', [turns[3]!.turn_id]);
  t.same(withNul, { context: { reply: 'Answer:\\0nul' } }, 'a NUL in a context is stored as \\0 too: jsonb refuses one');
});

t.test('a turn that cannot be stored fails alone, with nothing of it stored; the turns it waited with are stored', async (t) => {
  const { url, store, sessions, saves } = await setUp(t);
  const open = await sessions(4);
  const gone = { id: `deleted-${randomUUID()}`, ticket: null };
  const turns = [turnOf(open[0]!, 'first'), turnOf(open[1]!, 'second'), turnOf(open[2]!, 'third'), turnOf(gone, 'orphan'), turnOf(open[3]!, 'fifth')];
  let outcomes: PromiseSettledResult<unknown>[] = [];
  const statements = await saves(async () => {
    outcomes = await Promise.allSettled(turns.map((turn) => store.persistTurn(turn)));
  });
  t.same(
    outcomes.map((o) => o.status),
    ['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
    'only the turn of a session that no longer exists fails',
  );
  t.match((outcomes[3] as PromiseRejectedResult).reason, { message: /foreign key/ }, 'with the error Postgres gave for it');
  const ids = turns.map((turn) => turn.turn_id);
  t.same(statements, [[ids[0]], ids.slice(1), [ids[1]], [ids[2]], [ids[3]], [ids[4]]], 'the four that waited were tried together, then each alone');
  const stored = await query<{ content: string }>(url, 'SELECT content FROM chat_messages WHERE role = $1 ORDER BY content', ['user']);
  t.same(
    stored.map((m) => m.content),
    ['fifth', 'first', 'second', 'third'],
    'the others are stored once each',
  );
  const [orphan] = await query(url, 'SELECT count(*)::int AS n FROM conversation_turns WHERE id = $1', [turns[3]!.turn_id]);
  t.same(orphan, { n: 0 }, 'nothing of the failed turn is');
});

t.test('the turns of one session are stored one at a time, in the order they ended', async (t) => {
  const { url, store, sessions, saves } = await setUp(t);
  const [busy, other, first] = await sessions(3);
  const lead = turnOf(first!, 'stored first');
  const earlier = turnOf(busy!, 'earlier', { override: { model_name: 'earlier-model', model_provider: 'openai', model_temperature: null } });
  const later = turnOf(busy!, 'later', { ticket_id: null, override: { model_name: 'later-model', model_provider: 'openai', model_temperature: null } });
  const third = turnOf(other!, 'of another session');
  const statements = await saves(() => Promise.all([lead, earlier, later, third].map((turn) => store.persistTurn(turn))));
  t.same(
    statements,
    [[lead.turn_id], [earlier.turn_id, third.turn_id], [later.turn_id]],
    "of the turns that waited together, the later turn of a session waits for its earlier one's statement to end; a turn of another session that came after it does not",
  );
  const [session] = await query(url, 'SELECT model_name FROM chat_sessions WHERE id = $1', [busy!.id]);
  t.same(session, { model_name: 'later-model' }, "the session holds the later turn's override");
  const [counts] = await query(url, 'SELECT count(*)::int AS n FROM conversation_turns WHERE session_id = $1', [busy!.id]);
  t.same(counts, { n: 2 }, 'and both turns');
});

t.test('a connection that began storing turns on an empty database finds sessions and tickets by key once there are thousands', async (t) => {
  const { url, sessions } = await setUp(t);
  // One connection, whose plans are the ones kept: Postgres plans the storing statement once per connection.
  const db = openDatabase(url, 1);
  t.teardown(() => db.close());
  const store = new ConversationStore(db);
  for (const session of await sessions(8)) await store.persistTurn(turnOf(session, 'early'));

  // Thousands of sessions, and thousands of tickets that came and went (dead until an autovacuum), none analyzed.
  await query(
    url,
    `INSERT INTO chat_sessions (id, status, created_at, updated_at) SELECT 'many-' || i, 'AI_ACTIVE', now(), now() FROM generate_series(1, 3000) i`,
  );
  await query(
    url,
    `INSERT INTO session_turn_queue (session_id, turn_id, instance_id, expires_at, created_at)
     SELECT 'many-' || i, gen_random_uuid(), 'test', now() + interval '1 minute', now() FROM generate_series(1, 3000) i`,
  );
  await query(url, "DELETE FROM session_turn_queue WHERE session_id LIKE 'many-%'");
  /** Sequential scans of the sessions and of the line, as counted once the storing connection reported its own. */
  const scans = async () => {
    await db.query('SELECT pg_stat_force_next_flush()');
    const [row] = await query<{ sessions: number; tickets: number }>(
      url,
      `SELECT sum(seq_scan) FILTER (WHERE relname = 'chat_sessions')::int AS sessions, sum(seq_scan) FILTER (WHERE relname = 'session_turn_queue')::int AS tickets
       FROM pg_stat_user_tables`,
    );
    return row!;
  };
  const later = await sessions(4);
  const before = await scans();
  for (const session of later) await store.persistTurn(turnOf(session, 'later', { time_zone: 'Europe/Paris' }));
  const after = await scans();
  t.same(
    { sessions: after.sessions - before.sessions, tickets: after.tickets - before.tickets },
    { sessions: 0, tickets: 0 },
    'four turns stored later read no table whole: neither the 3,012 sessions nor the line with its 3,000 dead tickets',
  );
  const stored = await query(url, 'SELECT time_zone FROM chat_sessions WHERE id = ANY ($1)', [later.map((s) => s.id)]);
  t.same(
    stored.map((row) => row.time_zone),
    ['Europe/Paris', 'Europe/Paris', 'Europe/Paris', 'Europe/Paris'],
    'each session holds what its turn brought',
  );
  t.same(await query(url, 'SELECT count(*)::int AS n FROM session_turn_queue'), [{ n: 0 }], 'and every ticket has left its line');
});

t.test("storing a turn checks no key of its snapshot, and a deleted turn's snapshot still goes with it", async (t) => {
  const { url, store, sessions } = await setUp(t);
  const [kept, dropped] = await sessions(2);
  const keptTurn = turnOf(kept!, 'kept');
  const droppedTurn = turnOf(dropped!, 'dropped');
  await Promise.all([store.persistTurn(keptTurn), store.persistTurn(droppedTurn)]);
  // A foreign key from the snapshot to its turn is checked by locking the turn row: its xmax then names the storing
  // transaction. The statement writes both from the same row, so there is nothing to check.
  t.same(
    await query(url, 'SELECT xmax::text AS xmax FROM conversation_turns WHERE id = $1', [keptTurn.turn_id]),
    [{ xmax: '0' }],
    'the stored turn row was not locked by a check of its snapshot',
  );
  t.same(
    await query(url, `SELECT count(*)::int AS n FROM pg_constraint WHERE conrelid = 'turn_context_snapshots'::regclass AND contype = 'f'`),
    [{ n: 0 }],
    'the snapshots have no foreign key',
  );

  await query(url, 'DELETE FROM chat_sessions WHERE id = $1', [dropped!.id]);
  const left = async () =>
    (
      await query<{ turn_id: string }>(url, 'SELECT turn_id::text FROM turn_context_snapshots WHERE turn_id = ANY ($1::uuid[]) ORDER BY turn_id', [
        [keptTurn.turn_id, droppedTurn.turn_id],
      ])
    ).map((row) => row.turn_id);
  t.same(await left(), [keptTurn.turn_id], "a deleted session's turns take their snapshots with them, and no other");
  await query(url, 'DELETE FROM conversation_turns WHERE id = $1', [keptTurn.turn_id]);
  t.same(await left(), [], 'a turn deleted by itself takes its snapshot with it');
});
