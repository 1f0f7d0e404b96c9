// Issue 25 item 2: the database statements of one chat turn, counted on the host's own connections (the host runs in
// this process), so a change that adds a round trip to the turn path shows here. Background work (Agenda's polling,
// the lease workers' sweeps of runs and jobs, the sweep of lapsed tickets and leases) and the WebSocket fan-out's
// notifications are left out: not the turn's.
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { createSubAdmin } from '../helpers/admins.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { rowsRead } from '../helpers/plan.js';
import { query } from '../helpers/services.js';
import { sentStatementsOf, statementsOf } from '../helpers/statements.js';
import { stream } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

const CHAT_MODEL = { model_provider: 'openai', model_name: 'gpt-4o-mini' };
const BACKGROUND = /agenda|NOTIFY|pg_notify|_runs\b|etl_jobs|scheduled_tasks\b|WHERE expires_at </;

/** The statements sent on connections to `database` while `work` runs (those `counted` keeps), whitespace collapsed. */
/** The statements of `work` that are the turn's (not {@link BACKGROUND}). */
const turnStatementsOf = (database: string, work: () => Promise<unknown>) => statementsOf(database, work, (text) => !BACKGROUND.test(text));

/** Whether a statement lets its transaction commit without waiting for the WAL flush (`SKIP_FLUSH_WAIT`). */
const skipsFlushWait = (statement: string) => statement.includes("set_config('synchronous_commit', 'off', true)");

/** Each statement as its first 60 characters: what it does, not everything it does it with. */
const head = (statements: string[]) => statements.map((s) => s.slice(0, 60));

t.test('a public turn costs one statement per step, and a new session skips its line', async (t) => {
  const fixture = await startOpenAiFixture({ respond: () => ({ content: 'Parcels ship in two days.' }) });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const database = new URL(host.databaseUrl).pathname.slice(1);
  const admin = new AdminClient(host.url);
  await admin.login();
  // A public chat agent on the fixture's model.
  const publicAgent = async (name: string, extra: Record<string, unknown> = {}) =>
    (await admin.request('POST', '/agents', { name, agent_type: 'chat', public_access_mode: 'public_anonymous', ...CHAT_MODEL, ...extra })).body;
  const agent = await publicAgent('Counted');
  const turn = async (body: Record<string, unknown>) => {
    const { events } = await stream(host.url, { agent_id: agent.agent_id, message: 'When do parcels ship?', ...body });
    const done = events.at(-1) as { type: string; session_id?: string };
    t.same([done.type, events.filter((e) => e.type === 'error')], ['done', []], 'the turn ends with done and no error');
    return done.session_id!;
  };
  await turn({}); // warms the host's caches and connections

  let sessionId = '';
  const freshInFull = await turnStatementsOf(database, async () => (sessionId = await turn({})));
  const fresh = head(freshInFull);
  // The stored turn leaves the line through `session_turns_stored` (migration 0039).
  const line = (statements: string[]) => statements.filter((s) => s.includes('session_turn_queue') || s.includes('session_turns_stored('));
  t.same(line(fresh), [], 'a session issued for the turn joins its line in the statement creating it, and never asks who is ahead');
  t.ok(
    freshInFull.some(
      (s) =>
        /^WITH b0 AS \( ?INSERT INTO rate_limit_buckets/.test(s) &&
        /\bs AS \( ?INSERT INTO chat_sessions/.test(s) &&
        s.includes('INSERT INTO session_turn_queue'),
    ),
    "the statement that takes the turn's minute budgets creates the session and takes the turn's ticket",
  );
  t.match(
    freshInFull.at(-1),
    /^WITH u AS \( ?SELECT \* FROM jsonb_to_recordset\(.*\bm AS \( INSERT INTO chat_messages/,
    'the turn is stored last, in one statement',
  );
  t.notOk(
    fresh.some((s) => /\b(agents|knowledge_mounts|agent_skill_mounts|agent_mcp_mounts)\b/.test(s)),
    'the agent and its mounts come from the runtime config cache',
  );
  t.equal(fresh.filter((s) => s.includes('rate_limit_buckets')).length, 1, "the caller's and the anonymous minute budgets are taken in one statement");
  t.notOk(
    fresh.some((s) => s.startsWith('SELECT') && s.includes('conversation_turns')),
    "the caller's turns today are counted by the statement opening the session, not one of their own",
  );
  // The rate limits with the session (its ticket and the caller's count), then the turn.
  t.equal(fresh.length, 2, `a turn on a new session sends 2 statements: ${JSON.stringify(fresh, null, 1)}`);
  t.same(
    freshInFull.map(skipsFlushWait),
    [true, false],
    'the first, which writes only budgets, the new session and its ticket, commits without waiting for its WAL flush; the stored turn waits for it, and so covers it',
  );

  const continuedInFull = await turnStatementsOf(database, () => turn({ thread_id: sessionId }));
  const continued = head(continuedInFull);
  t.same(
    line(continuedInFull).map((s) => s.split(' ').slice(0, 3).join(' ')),
    ['WITH b0 AS', 'WITH u AS'],
    'a turn continuing a session takes its ticket with its minute budgets and, first in line, opens the session in the same statement; the stored turn leaves the line',
  );
  t.equal(continued.length, 2, `and sends those 2 statements only: ${JSON.stringify(continued, null, 1)}`);
  t.ok(
    continuedInFull[0]!.includes('session_line_first('),
    "the first opens the session only when the ticket it took is first, as seen after the line's lock (migration 0038)",
  );
  t.notOk(
    continuedInFull[0]!.includes('INSERT INTO chat_messages'),
    'the first, for a session not seen under takeover, only takes budgets and the ticket: it writes no message table, whose locks and indexes an AI turn would pay for',
  );
  t.match(
    continuedInFull[0],
    /\bs AS \(SELECT /,
    'the statement opening the session reads its row: it is written once a turn, with the stored turn (one new row version a turn, as two indexes hold its updated_at)',
  );
  // Its session is found by its key, however many sessions the agent has and whatever the planner's statistics say:
  // this database is new and, with autovacuum off for the table, its sessions are never analyzed.
  await query(host.databaseUrl, 'ALTER TABLE chat_sessions SET (autovacuum_enabled = false)');
  await query(
    host.databaseUrl,
    `INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at)
     SELECT 'issued-' || i, $1, 'AI_ACTIVE', true, now(), now() FROM generate_series(1, 3000) i`,
    [agent.agent_id],
  );
  const [opening] = await sentStatementsOf(
    database,
    () => turn({ thread_id: sessionId }),
    (text) => text.includes('session_line_first('),
  );
  t.equal(
    await rowsRead(host.databaseUrl, opening!.text, opening!.values, 'chat_sessions'),
    1,
    "the statement opening a customer's session reads its row alone, not each of the agent's 3,001 sessions",
  );
  const updatedAt = async (id: string) =>
    (await query<{ at: string }>(host.databaseUrl, 'SELECT updated_at::text AS at FROM chat_sessions WHERE id = $1', [id]))[0]!.at;
  const beforeTurn = await updatedAt(sessionId);
  await turn({ thread_id: sessionId });
  t.ok((await updatedAt(sessionId)) > beforeTurn, "a continued turn still moves its session's updated_at");
  t.same(
    continuedInFull.map(skipsFlushWait),
    [true, false],
    'the one taking minute budgets and the ticket and opening the session commits without waiting for its WAL flush; the stored turn waits for it, and so covers it',
  );

  // The model path: an administrator names the model and a session of its own.
  const modelPathInFull = await turnStatementsOf(database, async () => {
    const { events } = await stream(
      host.url,
      { ...CHAT_MODEL, message: 'When do parcels ship?', thread_id: `model-path-${Date.now()}` },
      { cookie: admin.cookieHeader('/stream') },
    );
    t.same([events.at(-1)?.type, events.filter((e) => e.type === 'error')], ['done', []], "the administrator's turn ends with done and no error");
  });
  t.same(
    modelPathInFull.map((s) => s.split(' ').slice(0, 3).join(' ')),
    ['SELECT s.id AS', 'WITH b0 AS', 'WITH u AS'],
    "an administrator's turn reads the administrator's session, takes its budget and ticket and creates its session in one statement, then stores the turn",
  );
  t.same(
    modelPathInFull.slice(1).map(skipsFlushWait),
    [true, false],
    "creating the administrator's session does not wait for its WAL flush either: the stored turn's covers it",
  );

  const desk = await publicAgent('Staffed', { human_takeover_enabled: true });
  const staffed = (await stream(host.url, { agent_id: desk.agent_id, message: 'Hello?' })).events.at(-1) as { session_id: string };
  t.equal((await admin.request('POST', `/sessions/${staffed.session_id}/takeover`, {})).status, 200, 'an operator takes a session over');
  const customerMessage = (message: string) =>
    turnStatementsOf(database, async () => {
      const { events } = await stream(host.url, { agent_id: desk.agent_id, message, thread_id: staffed.session_id });
      t.same(
        events.map((e) => e.type),
        ['done'],
        'the customer gets no AI reply',
      );
    });
  t.same(
    head(await customerMessage('Is anyone there?')).map((s) => s.slice(0, 10)),
    ['WITH b0 AS', 'WITH s AS '],
    "the host's first message to the session since the takeover: its budgets and ticket, then the statement opening the session stores it",
  );
  const beforeMessage = await updatedAt(staffed.session_id);
  const taken = await customerMessage('Still there?');
  t.equal(taken.length, 1, `the next, to a session the host saw under takeover, sends one statement: ${JSON.stringify(head(taken), null, 1)}`);
  t.ok(
    /^WITH b0 AS \( ?INSERT INTO rate_limit_buckets/.test(taken[0]!) && taken[0]!.includes('INSERT INTO chat_messages'),
    'which takes the minute budgets and stores the message, with no ticket in the line: no turn follows',
  );
  t.ok((await updatedAt(staffed.session_id)) > beforeMessage, "which moves the session's updated_at");
  t.ok(
    taken[0]!.includes(`CASE WHEN NOT EXISTS (SELECT 1 FROM cm) THEN set_config('synchronous_commit', 'off', true) END`),
    'and waits for its WAL flush when it stored the message (it is shown at once), not when it only took budgets and a ticket',
  );
  t.equal(
    await query<{ n: number }>(host.databaseUrl, 'SELECT count(*)::int AS n FROM session_turn_queue WHERE session_id = $1', [staffed.session_id]).then(
      (r) => r[0]!.n,
    ),
    0,
    'and leaves nothing in the line',
  );
  let customer: WsClient | undefined;
  const joined = await turnStatementsOf(database, async () => {
    customer = await WsClient.connect(host.url, `/public/ws/${staffed.session_id}`);
    await customer.waitFor('session');
  });
  t.teardown(() => customer?.close());
  t.equal(joined.length, 1, `a customer socket joining a session sends one statement: ${JSON.stringify(head(joined), null, 1)}`);
  t.ok(
    /^WITH b0 AS \( ?INSERT INTO rate_limit_buckets/.test(joined[0]!) && joined[0]!.includes('issued_publicly') && joined[0]!.includes('FROM chat_messages'),
    "it takes the handshake's minute budget, reads the issued session it joins and the history the socket is sent first",
  );
  t.ok(skipsFlushWait(joined[0]!), 'and, writing only that budget, does not wait for its WAL flush');
  // An operator's socket is sent nothing before its administrator is re-read: what every administrator request reads.
  const reader = await createSubAdmin(admin, 'statement-reader', ['conversations.read']);
  const read = await turnStatementsOf(database, async () =>
    t.equal((await reader.client.request('GET', `/sessions/${staffed.session_id}/messages`)).status, 200),
  );
  t.same(
    read.filter((s) => /admin_sessions|admin_permission_grants/.test(s)).map((s) => s.includes('admin_permission_grants') && s.includes('admin_sessions')),
    [true],
    "a sub-administrator's session and grants are read in one statement",
  );
  const messages = (await admin.request('GET', `/sessions/${staffed.session_id}/messages`)).body.items as { role: string; content: string }[];
  t.same(
    messages.slice(-2).map((m) => (m.role === 'user' ? [m.role, m.content] : [m.role])),
    [
      ['user', 'Is anyone there?'],
      ['user', 'Still there?'],
    ],
    'and they are in the session, in order',
  );
  const beforeAdminMessage = await updatedAt(staffed.session_id);
  let asAdmin: Awaited<ReturnType<typeof stream>> | undefined;
  const [storingAdminMessage] = await sentStatementsOf(
    database,
    async () =>
      (asAdmin = await stream(
        host.url,
        { agent_id: desk.agent_id, message: 'An administrator asks too', thread_id: staffed.session_id },
        { cookie: admin.cookieHeader('/stream') },
      )),
    (text) => text.includes('INSERT INTO chat_messages'),
  );
  t.same(
    asAdmin!.events.map((e) => e.type),
    ['done'],
    'an administrator writing to the session under takeover gets no AI reply either',
  );
  t.ok(
    storingAdminMessage!.text.includes(`CASE WHEN NOT EXISTS (SELECT 1 FROM cm) THEN set_config('synchronous_commit', 'off', true) END`),
    'the statement opening the session stores the message and then waits for its WAL flush: the message is shown at once',
  );
  t.ok((await updatedAt(staffed.session_id)) > beforeAdminMessage, "and the statement storing the message (an administrator's session) moves updated_at too");
});

t.test("scheduled runs' own statements: a slot's due tasks fire in batches that claim their runs; each run ends in one", async (t) => {
  const fixture = await startOpenAiFixture({ respond: () => ({ content: 'Your order ships today.' }) });
  t.teardown(() => fixture.close());
  // No supervisor sweep while the runs are counted: its statements are not the runs'.
  const host = await startTestHost(t, {
    env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`, AGENT_HOST__SCHEDULED_TASKS__SUPERVISOR_INTERVAL_SECONDS: '3600' },
  });
  const database = new URL(host.databaseUrl).pathname.slice(1);
  // Agenda runs the supervisor once as the host starts, late on a busy machine: the count starts after that run.
  await eventually(async () => {
    const [job] = await query<{ last_finished_at: Date | null }>(
      host.databaseUrl,
      `SELECT last_finished_at FROM agenda_jobs WHERE name = 'scheduled-tasks:supervisor'`,
    );
    return job?.last_finished_at ?? undefined;
  }, "the supervisor's first run");
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'reminders', agent_type: 'chat', ...CHAT_MODEL })).body;
  // More tasks due at one time than one instance runs at once (16): they fire in two batches.
  const TASKS = 20;
  const runAt = new Date(Date.now() + 5_000).toISOString();
  const statements = await statementsOf(
    database,
    async () => {
      const tasks: { task_id: string }[] = [];
      for (let i = 0; i < TASKS; i++) {
        const created = await admin.request('POST', '/scheduled-tasks', {
          agent_id: agent.agent_id,
          payload: { message: `check order ${i}` },
          schedule_payload: { kind: 'once', run_at: runAt },
        });
        tasks.push(created.body);
      }
      t.same(
        await query(host.databaseUrl, `SELECT count(*)::int AS n FROM agenda_jobs WHERE name = 'scheduled-tasks:due'`),
        [{ n: 1 }],
        'tasks due in one slot arm one Agenda job',
      );
      t.ok(Date.now() < Date.parse(runAt), 'the tasks were made before they were due');
      for (const task of tasks) {
        await eventually(async () => {
          const [run] = (await admin.request('GET', `/scheduled-tasks/${task.task_id}/runs`)).body.items;
          return run?.execution_state === 'succeeded' ? run : undefined;
        }, 'the run to succeed');
      }
    },
    () => true,
  );
  // What the runner sends about tasks and runs, not the REST reads and writes above or the turns (counted above).
  const runner = head(statements.filter((text) => /^\s*(WITH|UPDATE|SELECT t\.\*)/.test(text) && /scheduled_task/.test(text)));
  const fire = "SELECT t.*, COALESCE((SELECT json_agg(json_build_object('sta";
  const record = 'WITH moved AS ( UPDATE scheduled_tasks t SET next_run_at = x';
  const end = 'WITH ended AS ( UPDATE scheduled_task_runs SET status = $3::';
  t.same(
    [...new Set(runner)].sort(),
    [end, fire, record].sort(),
    'the runner locks due tasks with their open runs, records their runs (claimed) with their next due times, and ends each run: nothing else',
  );
  t.same(
    runner.filter((s) => s === fire || s === record),
    [fire, record, fire, record],
    `${TASKS} tasks due together fire in two batches of two statements each`,
  );
  t.equal(runner.filter((s) => s === end).length, TASKS, 'each run ends in one statement, which also queues deferred runs');
  t.same(
    statements.filter((s) => /^(INSERT INTO session_turn_queue|SELECT count\(\*\)::int AS n FROM session_turn_queue)/.test(s)),
    [],
    'a run in a new session joins its line in the statement creating the session, and asks no one whether it is its turn',
  );
});
