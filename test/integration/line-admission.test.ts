// Issue 25 item 2: a turn to a session it continues takes its ticket in the statement taking its minute budgets, and
// that statement opens the session too when the ticket is first in line (ConversationStore.admitToSession), so the
// turn needs no statement of its own to open it. One turn at a time per session must still hold when another ticket
// is committed while that statement runs: those cases are played here with a second connection holding the line.
// Turns to sessions the server issued that come while such a statement runs go together in the next one: each must
// come out as it would alone.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import t from 'tap';
import { ConversationStore } from '../../core/src/chat/conversation-store.js';
import { joinLine, leaveLine } from '../../core/src/chat/turn-queue-store.js';
import { openDatabase } from '../../core/src/db/database.js';
import { eventually } from '../helpers/eventually.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { statementsOf } from '../helpers/statements.js';

t.test("a turn's admission opens its session only when its ticket is first in line", async (t) => {
  const url = await createTestDatabase(t);
  const db = openDatabase(url, 4);
  t.teardown(() => db.close());
  const store = new ConversationStore(db);
  const agentId = randomUUID();
  await query(url, `INSERT INTO agents (id, name, agent_type, status, created_at, updated_at) VALUES ($1, $2, 'chat', 'active', now(), now())`, [
    agentId,
    `admission-${agentId}`,
  ]);
  const session = async (status = 'AI_ACTIVE') => {
    const id = `session-${randomUUID()}`;
    await query(url, `INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at) VALUES ($1, $2, $3, true, now(), now())`, [
      id,
      agentId,
      status,
    ]);
    await query(url, `INSERT INTO chat_messages (id, session_id, role, content, message_type, created_at) VALUES ($1, $2, 'user', 'first', 'text', now())`, [
      randomUUID(),
      id,
    ]);
    return id;
  };
  const admit = (id: string, mode: 'choose' | 'continue_issued' = 'continue_issued', agent: string | null = agentId) =>
    store.admitToSession(id, agent, 10, mode, { quotaCaller: null, line: { turnId: randomUUID(), instanceId: 'test', seconds: 60 } }, []);
  const live = async (id: string) =>
    (await query<{ id: string }>(url, 'SELECT id::text FROM session_turn_queue WHERE session_id = $1 ORDER BY id', [id])).map((r) => r.id);

  t.test('alone in line: the ticket and the session with its history, in one statement', async (t) => {
    const id = await session();
    const admitted = await admit(id);
    t.same(await live(id), [admitted.ticketId], 'the ticket is taken');
    t.equal(admitted.opened?.session.id, id, 'the session is opened');
    t.same(admitted.opened?.history, [{ role: 'user', content: 'first' }], 'with its history');
    t.equal(admitted.opened?.ticketId, null, 'and no second ticket');
    const created = await admit(`new-${randomUUID()}`, 'choose');
    t.equal(created.opened?.session.status, 'AI_ACTIVE', 'a session an administrator names that nobody started is created and opened');
  });

  t.test('behind a live ticket: the ticket only', async (t) => {
    const id = await session();
    const ahead = await admit(id);
    const behind = await admit(id);
    t.ok(ahead.opened, 'the first turn opens the session');
    t.equal(behind.opened, undefined, 'the second does not');
    t.same(await live(id), [ahead.ticketId, behind.ticketId], 'and waits in line behind it');
  });

  t.test('under human takeover, or refused by its mode: the ticket only, and stage 2 decides', async (t) => {
    const held = await session('HUMAN_ACTIVE');
    const underTakeover = await admit(held);
    t.equal(underTakeover.opened, undefined, 'a session a human answers is not opened');
    t.same(await live(held), [underTakeover.ticketId], 'the turn still holds its ticket');
    const foreign = await admit(await session(), 'continue_issued', randomUUID());
    t.equal(foreign.opened, undefined, "a customer's session is not opened through another agent");
    t.not(foreign.ticketId, null, 'the ticket is left in the finally of the turn, as before');
  });

  /** A second connection inside a transaction that joined `id`'s line through the same SQL, so it holds the line's lock. */
  const holdLine = async (t: { teardown(fn: () => unknown): void }, id: string) => {
    const client = new pg.Client(url);
    await client.connect();
    t.teardown(() => client.end());
    await client.query('BEGIN');
    const [ticket] = (
      await client.query<{ id: string }>(joinLine({ session: '$1::varchar', turn: '$2', instance: '$3', seconds: '$4' }), [id, randomUUID(), 'other', 60])
    ).rows;
    return { client, ticket: ticket!.id };
  };
  /**
   * Starts an admission to `id` and resolves once it waits for the line's lock (its snapshot is taken by then), with the
   * admission's promise in an object (a promise resolving to a promise would wait for it).
   */
  const admitWaiting = async (id: string) => {
    const admission = admit(id);
    await waitingForLine('%', 'the admission to wait for the line');
    return { admission };
  };
  /** Resolves once one statement like `statement` waits for a line's lock. */
  const waitingForLine = (statement: string, what: string) =>
    eventually(async () => {
      const [waiting] = await query<{ n: number }>(
        url,
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory' AND query LIKE $1",
        [statement],
      );
      return waiting!.n === 1 || undefined;
    }, what);

  t.test('a ticket ahead committed while the statement waited for the line: not opened', async (t) => {
    const id = await session();
    const other = await holdLine(t, id);
    const { admission } = await admitWaiting(id);
    await other.client.query('COMMIT');
    const admitted = await admission;
    t.ok(BigInt(admitted.ticketId!) > BigInt(other.ticket), 'its ticket is numbered after the one that held the line');
    t.equal(admitted.opened, undefined, 'the session is not opened: its turn waits for the one ahead');
  });

  t.test('a turn stored while the statement waited: not opened, so the history it would read is not stale', async (t) => {
    const id = await session();
    const other = await holdLine(t, id);
    const { admission } = await admitWaiting(id);
    // The other turn runs to its end within its transaction: its reply stored, its session written, its ticket gone.
    await other.client.query(
      `INSERT INTO chat_messages (id, session_id, role, content, message_type, created_at) VALUES ($1, $2, 'assistant', 'answered', 'text', now())`,
      [randomUUID(), id],
    );
    await other.client.query('UPDATE chat_sessions SET updated_at = now() WHERE id = $1', [id]);
    await other.client.query(leaveLine('$1'), [other.ticket]);
    await other.client.query('COMMIT');
    const admitted = await admission;
    t.equal(admitted.opened, undefined, 'the session is not opened in the statement whose snapshot missed that turn');
    const reopened = await store.openSession(id, agentId, 10, 'continue_issued', { quotaCaller: null, firstIn: admitted.ticketId });
    t.same(
      reopened?.history,
      [
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'answered' },
      ],
      'stage 2 then opens it with the stored reply in its history',
    );
  });

  /** The admissions `work` sends, and how many of them admitted several turns in one statement. */
  const admissionsOf = async (work: () => Promise<unknown>) => {
    const sent = await statementsOf(new URL(url).pathname.slice(1), work, (text) => text.includes('session_line_first('));
    return { sent: sent.length, grouped: sent.filter((text) => text.includes('take_turn_buckets(')).length };
  };

  t.test('turns that come together share a statement, each admitted as it would be alone', async (t) => {
    const free = await Promise.all(Array.from({ length: 6 }, () => session()));
    const busy = await session();
    const ahead = await admit(busy);
    const held = await session('HUMAN_ACTIVE');
    const foreign = await session();
    let admitted: Awaited<ReturnType<typeof admit>>[] = [];
    const { sent, grouped } = await admissionsOf(
      async () => (admitted = await Promise.all([...free, busy, held].map((id) => admit(id)).concat(admit(foreign, 'continue_issued', randomUUID())))),
    );
    // The first goes at once, alone; the rest wait for it and go together.
    t.ok(grouped >= 1 && sent < admitted.length, `9 turns at once took ${sent} statements, ${grouped} of them grouped`);
    const [busyTurn, heldTurn, foreignTurn] = admitted.slice(free.length);
    for (const [i, id] of free.entries()) {
      t.equal(admitted[i]!.opened?.session.id, id, `a free session is opened (${i + 1})`);
      t.same(admitted[i]!.opened?.history, [{ role: 'user', content: 'first' }], 'with its history');
      t.same(await live(id), [admitted[i]!.ticketId], 'and its ticket taken');
    }
    t.equal(busyTurn!.opened, undefined, 'a session with a live ticket ahead is not opened');
    t.same(await live(busy), [ahead.ticketId, busyTurn!.ticketId], 'its turn waits in line behind it');
    t.equal(heldTurn!.opened, undefined, 'a session a human answers is not opened');
    t.same(await live(held), [heldTurn!.ticketId], 'its turn holds its ticket');
    t.equal(foreignTurn!.opened, undefined, "a customer's session is not opened through another agent");
    t.not(foreignTurn!.ticketId, null, 'its ticket is left in the finally of the turn, as alone');
  });

  t.test("administrators' turns that come together share a statement, which creates the sessions nobody started", async (t) => {
    const named = Array.from({ length: 5 }, () => `named-${randomUUID()}`);
    const existing = await session();
    const busy = await session();
    const ahead = await admit(busy, 'choose');
    const unbound = `unbound-${randomUUID()}`;
    await query(url, `INSERT INTO chat_sessions (id, status, created_at, updated_at) VALUES ($1, 'AI_ACTIVE', now(), now())`, [unbound]);
    const mismatched = await session();
    let admitted: Awaited<ReturnType<typeof admit>>[] = [];
    const { sent, grouped } = await admissionsOf(
      async () =>
        (admitted = await Promise.all([...named, existing, busy, unbound].map((id) => admit(id, 'choose')).concat(admit(mismatched, 'choose', randomUUID())))),
    );
    t.ok(grouped >= 1 && sent < admitted.length, `9 turns at once took ${sent} statements, ${grouped} of them grouped`);
    for (const [i, id] of named.entries()) t.equal(admitted[i]!.opened?.session.status, 'AI_ACTIVE', `a session nobody started is created (${i + 1})`);
    const stored = await query<{ id: string; agent_id: string | null }>(url, 'SELECT id, agent_id FROM chat_sessions WHERE id = ANY($1) ORDER BY id', [named]);
    t.same(
      stored.map((row) => row.id),
      [...named].sort(),
      'and stored',
    );
    const [existingTurn, busyTurn, unboundTurn, mismatchedTurn] = admitted.slice(named.length);
    t.same(existingTurn!.opened?.history, [{ role: 'user', content: 'first' }], 'an existing session is opened with its history');
    t.equal(busyTurn!.opened, undefined, 'a session with a live ticket ahead is not opened');
    t.same(await live(busy), [ahead.ticketId, busyTurn!.ticketId], 'its turn waits in line behind it');
    t.equal(unboundTurn!.opened?.session.agent_id, agentId, "a session without an agent is opened, bound to the turn's");
    t.equal(mismatchedTurn!.opened, undefined, 'a session of another agent is not opened');
    t.not(mismatchedTurn!.ticketId, null, 'its ticket is left in the finally of the turn, as alone');
    const [row] = await query<{ agent_id: string }>(url, 'SELECT agent_id FROM chat_sessions WHERE id = $1', [mismatched]);
    t.equal(row!.agent_id, agentId, 'and it keeps its agent');
  });

  t.test('in a shared statement, a ticket ahead committed while it waited for one of its lines: that session only is not opened', async (t) => {
    const [first, waited, other] = [await session(), await session(), await session()];
    const holder = await holdLine(t, waited);
    let admitted: Awaited<ReturnType<typeof admit>>[] = [];
    const counted = admissionsOf(async () => {
      // `first` goes alone, at once; the two others come meanwhile and wait for it, then share a statement.
      const turns = [first, waited, other].map((id) => admit(id));
      await waitingForLine('%take_turn_buckets(%', 'the shared statement to wait for the held line');
      await holder.client.query('COMMIT');
      admitted = await Promise.all(turns);
    });
    t.equal((await counted).grouped, 1, 'the two turns behind the first shared one statement');
    const [firstTurn, waitedTurn, otherTurn] = admitted;
    t.equal(firstTurn!.opened?.session.id, first, 'the lone turn opened its session');
    t.ok(BigInt(waitedTurn!.ticketId!) > BigInt(holder.ticket), "the waiting turn's ticket is numbered after the one that held the line");
    t.equal(waitedTurn!.opened, undefined, 'its session is not opened: it waits for the turn ahead');
    t.equal(otherTurn!.opened?.session.id, other, 'the other session of the statement is opened');
  });
});
