// Issue 25 item 2: the database statements of one chat turn, counted on the host's own connections (the host runs in
// this process), so a change that adds a round trip to the turn path shows here. Background work (Agenda's polling,
// the lease workers' sweeps of runs and jobs) and the WebSocket fan-out's notifications are left out: not the turn's.
import pg from 'pg';
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { stream } from '../helpers/sse.js';

const BACKGROUND = /agenda|NOTIFY|pg_notify|_runs\b|etl_jobs|scheduled_tasks\b/;

/** The statements sent on connections to `database` while `work` runs (those `counted` keeps), whitespace collapsed. */
async function statementsOf(database: string, work: () => Promise<unknown>, counted = (text: string) => !BACKGROUND.test(text)): Promise<string[]> {
  const sent: string[] = [];
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, config: unknown, ...rest: unknown[]) {
    const text = typeof config === 'string' ? config : ((config as { text?: string }).text ?? '');
    if (this.database === database && counted(text)) sent.push(text.replace(/\s+/g, ' ').trim());
    return (original as (...args: unknown[]) => unknown).apply(this, [config, ...rest]);
  } as typeof original;
  try {
    await work();
  } finally {
    pg.Client.prototype.query = original;
  }
  return sent;
}

/** Each statement as its first 60 characters: what it does, not everything it does it with. */
const head = (statements: string[]) => statements.map((s) => s.slice(0, 60));

t.test('a public turn costs one statement per step, and a new session skips its line', async (t) => {
  const fixture = await startOpenAiFixture({ respond: () => ({ content: 'Parcels ship in two days.' }) });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const database = new URL(host.databaseUrl).pathname.slice(1);
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Counted',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
    })
  ).body;
  const turn = async (body: Record<string, unknown>) => {
    const { events } = await stream(host.url, { agent_id: agent.agent_id, message: 'When do parcels ship?', ...body });
    const done = events.at(-1) as { type: string; session_id?: string };
    t.same([done.type, events.filter((e) => e.type === 'error')], ['done', []], 'the turn ends with done and no error');
    return done.session_id!;
  };
  await turn({}); // warms the host's caches and connections

  let sessionId = '';
  const freshInFull = await statementsOf(database, async () => (sessionId = await turn({})));
  const fresh = head(freshInFull);
  const line = (statements: string[]) => statements.filter((s) => s.includes('session_turn_queue'));
  t.same(line(fresh), [], 'a session issued for the turn joins its line in the statement creating it, and never asks who is ahead');
  t.ok(
    freshInFull.some((s) => /^WITH s AS \( ?INSERT INTO chat_sessions/.test(s) && s.includes('INSERT INTO session_turn_queue')),
    "the statement that creates the session takes the turn's ticket",
  );
  t.match(fresh.at(-1), /^WITH m AS \( INSERT INTO chat_messages/, 'the turn is stored last, in one statement');
  t.notOk(
    fresh.some((s) => /\b(agents|knowledge_mounts|agent_skill_mounts|agent_mcp_mounts)\b/.test(s)),
    'the agent and its mounts come from the runtime config cache',
  );
  t.equal(fresh.filter((s) => s.includes('rate_limit_buckets')).length, 1, "the caller's and the anonymous minute budgets are taken in one statement");
  t.notOk(
    fresh.some((s) => s.startsWith('SELECT') && s.includes('conversation_turns')),
    "the caller's turns today are counted by the statement opening the session, not one of their own",
  );
  // The rate limits, the session (with its ticket and the caller's count), the turn.
  t.ok(fresh.length <= 3, `a turn on a new session sends at most 3 statements: ${JSON.stringify(fresh, null, 1)}`);

  const continued = head(await statementsOf(database, () => turn({ thread_id: sessionId })));
  t.same(
    line(continued).map((s) => s.split(' ')[0]),
    ['INSERT', 'SELECT'],
    'a turn continuing a session asks once who is ahead of it',
  );
  // Its ticket and who is ahead; the session's own minute budget is taken with the others.
  t.ok(continued.length <= fresh.length + 2, `and sends at most two statements more: ${JSON.stringify(continued, null, 1)}`);
});

t.test("a scheduled run's own statements: fire, claim, end", async (t) => {
  const fixture = await startOpenAiFixture({ respond: () => ({ content: 'Your order ships today.' }) });
  t.teardown(() => fixture.close());
  // No supervisor sweep while the run is counted: its statements are not the run's.
  const host = await startTestHost(t, {
    env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`, AGENT_HOST__SCHEDULED_TASKS__SUPERVISOR_INTERVAL_SECONDS: '3600' },
  });
  const database = new URL(host.databaseUrl).pathname.slice(1);
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'reminders', agent_type: 'chat', model_provider: 'openai', model_name: 'gpt-4o-mini' })).body;
  const statements = await statementsOf(
    database,
    async () => {
      const task = (
        await admin.request('POST', '/scheduled-tasks', {
          agent_id: agent.agent_id,
          payload: { message: 'check the order status' },
          schedule_payload: { kind: 'once', run_at: new Date(Date.now() + 1500).toISOString() },
        })
      ).body;
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        const [run] = (await admin.request('GET', `/scheduled-tasks/${task.task_id}/runs`)).body.items;
        if (run?.execution_state === 'succeeded') return;
      }
      throw new Error('the run did not succeed within 30 s');
    },
    () => true,
  );
  // What the runner sends about tasks and runs, not the REST reads above or the turn (counted above).
  const runner = statements.filter(
    (text) =>
      /^\s*(WITH|UPDATE|INSERT|SELECT \* FROM scheduled_tasks WHERE id = \$1 AND status = 'active' FOR UPDATE|SELECT id, status, due_at)/.test(text) &&
      /scheduled_task/.test(text),
  );
  t.same(
    head(runner.filter((s) => !s.startsWith('INSERT INTO scheduled_tasks'))),
    [
      "SELECT * FROM scheduled_tasks WHERE id = $1 AND status = 'ac",
      'SELECT id, status, due_at FROM scheduled_task_runs WHERE tas',
      'WITH run AS ( INSERT INTO scheduled_task_runs (id, task_id, ',
      "UPDATE scheduled_task_runs r SET status = 'running', lease_o",
      'WITH ended AS ( UPDATE scheduled_task_runs SET status = $3::',
    ],
    'firing the due time locks the task, reads its open runs and records the run with the next due time in one statement; the claim reads the task and records the session; the end queues deferred runs in the same statement',
  );
  t.same(
    statements.filter((s) => /^(INSERT INTO session_turn_queue|SELECT count\(\*\)::int AS n FROM session_turn_queue)/.test(s)),
    [],
    'the run in a new session joins its line in the statement creating the session, and asks no one whether it is its turn',
  );
});
