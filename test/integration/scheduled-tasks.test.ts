// Scheduled tasks (spec 4.6, 3.6): made over REST, fired by Agenda at their due times, run as chat turns of their
// session, read and cancelled over REST. Due times are a second or two ahead and the supervisor sweeps every second
// (config/test.toml), so no test waits a real minute.
import t from 'tap';
import type { SessionBroadcast } from '@agent-host/core';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();
const SHORT = { AGENT_HOST__SCHEDULED_TASKS__MIN_INTERVAL_SECONDS: '1' };

async function setUp(t: Parameters<typeof startTestHost>[0], env: Record<string, string> = {}, databaseUrl?: string) {
  const host = await startTestHost(t, { env: { ...SHORT, ...env }, ...(databaseUrl && { databaseUrl }) });
  const admin = new AdminClient(host.url);
  await admin.login();
  return { host, admin };
}

async function chatAgent(admin: AdminClient, extra: Record<string, unknown> = {}) {
  const created = await admin.request('POST', '/agents', {
    name: `scheduler ${Math.random()}`,
    agent_type: 'chat',
    public_access_mode: 'public_anonymous',
    ...extra,
  });
  return created.body.agent_id as string;
}

/** Opens a session of the agent with one turn, as an administrator who names it. */
async function openSession(admin: AdminClient, agentId: string, sessionId: string) {
  const opened = await admin.stream({ thread_id: sessionId, agent_id: agentId, message: 'Hello' });
  if (opened.events.at(-1)?.type !== 'done' || opened.events.some((e) => e.type === 'error'))
    throw new Error(`the session did not open: ${JSON.stringify(opened)}`);
  return sessionId;
}

/**
 * A run some worker holds, as a worker killed mid-run leaves it: `running` under a lease that ends (or ended)
 * `leaseEnds` seconds from now, with its last heartbeat `beatAgo` seconds ago. Times are seconds relative to now.
 */
async function heldRun(databaseUrl: string, taskId: string, run: { dueAgo: number; leaseEnds: number; beatAgo: number; createdAgo?: number }) {
  await query(
    databaseUrl,
    `INSERT INTO scheduled_task_runs (id, task_id, due_at, status, attempt_count, lease_owner, lease_expires_at, worker_heartbeat_at, created_at, started_at)
     VALUES (gen_random_uuid(), $1, now() - make_interval(secs => $2), 'running', 1, 'a-killed-host', now() + make_interval(secs => $3),
             now() - make_interval(secs => $4), now() - make_interval(secs => $5), now())`,
    [taskId, run.dueAgo, run.leaseEnds, run.beatAgo, run.createdAgo ?? 0],
  );
}

const runsOf = async (admin: AdminClient, taskId: string) => (await admin.request('GET', `/scheduled-tasks/${taskId}/runs?limit=200`)).body.items as any[];

/**
 * A host on a model whose replies stop after their first chunk until `release()`; `hold()` stops the next ones again.
 * Its chat agent is `agentId`.
 */
async function heldRepliesHost(t: Parameters<typeof startTestHost>[0]) {
  const fixture = await startOpenAiFixture();
  t.teardown(() => fixture.close());
  const gate = { release: () => {}, held: Promise.resolve() };
  const hold = () => (gate.held = new Promise<void>((resolve) => (gate.release = resolve)));
  hold();
  fixture.setRespond(() => ({ chunks: ['Still ', 'checking.'], beforeChunk: (index) => (index === 1 ? gate.held : undefined) }));
  const { host, admin } = await setUp(t, { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` });
  const agentId = await chatAgent(admin, { model_provider: 'openai', model_name: 'gpt-4o-mini' });
  return { host, admin, agentId, hold, release: () => gate.release() };
}

t.test('bad schedules are a 422 naming the field, and nothing is stored', async (t) => {
  const { host, admin } = await setUp(t, { AGENT_HOST__SCHEDULED_TASKS__MIN_INTERVAL_SECONDS: '600', AGENT_HOST__SCHEDULED_TASKS__MAX_HORIZON_DAYS: '30' });
  const agentId = await chatAgent(admin);
  const base = { agent_id: agentId, payload: { message: 'check the order status' } };
  const cases: [string, Record<string, unknown>, string][] = [
    ['an invalid cron expression', { ...base, schedule_payload: { kind: 'cron', expression: '61 * * * *' } }, 'body.schedule_payload.expression'],
    ['a six-field cron expression', { ...base, schedule_payload: { kind: 'cron', expression: '* * * * * *' } }, 'body.schedule_payload.expression'],
    [
      'a cron expression more often than the minimum',
      { ...base, schedule_payload: { kind: 'cron', expression: '*/5 * * * *' } },
      'body.schedule_payload.expression',
    ],
    [
      'an unknown time zone',
      { ...base, schedule_payload: { kind: 'cron', expression: '0 9 * * *', time_zone: 'Mars/Olympus' } },
      'body.schedule_payload.time_zone',
    ],
    ['an interval under the minimum', { ...base, schedule_payload: { kind: 'interval', every_seconds: 300 } }, 'body.schedule_payload.every_seconds'],
    ['an interval text that is none', { ...base, schedule_payload: { kind: 'interval', every: 'fortnightly-ish' } }, 'body.schedule_payload.every'],
    ['a time in the past', { ...base, schedule_payload: { kind: 'once', run_at: inSeconds(-60) } }, 'body.schedule_payload.run_at'],
    ['a time past the horizon', { ...base, schedule_payload: { kind: 'once', run_at: inSeconds(40 * 86_400) } }, 'body.schedule_payload.run_at'],
    [
      'an unknown agent',
      { ...base, agent_id: '00000000-0000-4000-8000-000000000000', schedule_payload: { kind: 'once', run_at: inSeconds(60) } },
      'body.agent_id',
    ],
    ['an unknown session', { ...base, session_id: 'no-such-session', schedule_payload: { kind: 'once', run_at: inSeconds(60) } }, 'body.session_id'],
    [
      'origin_session without a session',
      { ...base, target_mode: 'origin_session', schedule_payload: { kind: 'once', run_at: inSeconds(60) } },
      'body.session_id',
    ],
  ];
  for (const [what, body, loc] of cases) {
    const response = await admin.request('POST', '/scheduled-tasks', body);
    t.equal(response.status, 422, `${what}: 422`);
    t.same(
      (response.body.detail as { loc: string[] }[]).map((issue) => issue.loc.join('.')),
      [loc],
      `${what}: the issue names ${loc}`,
    );
  }
  const etl = (await admin.request('POST', '/agents', { name: 'an etl agent', agent_type: 'etl' })).body.agent_id as string;
  const onEtl = await admin.request('POST', '/scheduled-tasks', { ...base, agent_id: etl, schedule_payload: { kind: 'once', run_at: inSeconds(60) } });
  t.same([onEtl.status, onEtl.body.detail[0].loc], [422, ['body', 'agent_id']], 'tasks run on chat agents only');
  t.same(await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM scheduled_tasks'), [{ n: 0 }], 'nothing was stored');

  const unknown = await admin.request('GET', '/scheduled-tasks/7d0c2a9e-8d4b-4c6f-9a2e-1b7d5e0c4a81');
  t.same([unknown.status, unknown.body.code], [404, 'SCHEDULED_TASK_NOT_FOUND']);

  const normalised = await admin.request('POST', '/scheduled-tasks', {
    ...base,
    schedule_payload: { kind: 'cron', expression: '0 9 * * MON-FRI', time_zone: 'europe/berlin' },
  });
  t.equal(normalised.status, 201);
  t.same(normalised.body.schedule_payload, { kind: 'cron', expression: '0 9 * * 1-5', time_zone: 'Europe/Berlin' }, 'schedule_payload is returned normalised');
  t.same([normalised.body.target_mode, normalised.body.conflict_policy, normalised.body.status], ['new_session', 'skip', 'active'], 'the defaults');
  const next = new Date(normalised.body.next_run_at);
  t.equal(
    new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(next),
    '09:00',
    'next_run_at is 9:00 in Berlin',
  );
  const interval = await admin.request('POST', '/scheduled-tasks', { ...base, schedule_payload: { kind: 'interval', every: '2 hours' } });
  t.same(interval.body.schedule_payload.every_seconds, 7200, 'an interval text becomes every_seconds');
});

t.test('a one-off task runs once as a turn of its session: the reply is stored and broadcast, and the run links the turn', async (t) => {
  const { host, admin } = await setUp(t);
  const agentId = await chatAgent(admin);
  const sessionId = await openSession(admin, agentId, 'remind-1');
  const broadcasts: SessionBroadcast[] = [];
  t.teardown(host.app.domains.sessionEvents.subscribe((b) => broadcasts.push(b)));

  const created = await admin.request('POST', '/scheduled-tasks', {
    agent_id: agentId,
    session_id: sessionId,
    schedule_payload: { kind: 'once', run_at: inSeconds(1.5), time_zone: 'Europe/Berlin' },
    payload: { message: 'Send the stand-up notes.' },
  });
  t.same([created.status, created.body.target_mode], [201, 'origin_session']);
  const taskId = created.body.task_id as string;

  const [run] = await eventually(async () => {
    const runs = await runsOf(admin, taskId);
    return runs[0]?.execution_state === 'succeeded' ? runs : undefined;
  }, 'the run to succeed');
  t.equal(run.session_id, sessionId, 'the run posted into the origin session');
  t.ok(run.turn_id, 'the run links its turn');
  t.equal(run.heartbeat_stale, false);
  t.ok(new Date(run.started_at) >= new Date(created.body.next_run_at), 'it did not start before its due time');

  const turns = (await admin.request('GET', `/sessions/${sessionId}/turns`)).body.items as any[];
  const turn = turns.find((x) => x.turn_id === run.turn_id);
  t.ok(turn, 'the turn is in the session');
  t.same(run.derived_generation_usage, turn.generation_usage, "derived_generation_usage is the turn's usage");

  const messages = (await admin.request('GET', `/sessions/${sessionId}/messages`)).body.items as any[];
  const ofTurn = messages.filter((m) => m.turn_id === run.turn_id);
  t.same(ofTurn.map((m) => m.role).sort(), ['assistant', 'user'], "the task's message and the agent's reply are in the session");
  const told = ofTurn.find((m) => m.role === 'user');
  t.same([told.content, told.message_type], ['Send the stand-up notes.', 'rule'], 'the agent was told the task as a rule message');
  const shown = broadcasts.flatMap((b) => (b.type === 'message' && b.session_id === sessionId ? [b.message] : []));
  t.ok(
    shown.some((m) => m.role === 'assistant' && m.turn_id === run.turn_id),
    "the reply was broadcast to the session's watchers, as a chat reply is",
  );

  const task = await admin.request('GET', `/scheduled-tasks/${taskId}`);
  t.same([task.body.status, task.body.next_run_at], ['completed', null], 'a one-off task completes after its run');
  t.same(
    await query(host.databaseUrl, `SELECT count(*)::int AS n FROM agenda_jobs WHERE name = 'scheduled-tasks:due'`),
    [{ n: 0 }],
    "the due time's Agenda job is deleted once it succeeded: the job store does not grow by a row per due time",
  );
  const again = await admin.request('POST', `/scheduled-tasks/${taskId}/cancel`);
  t.same([again.status, again.body.code], [409, 'SCHEDULED_TASK_NOT_ACTIVE'], 'a completed task is not cancelled');
  const listed = await admin.request('GET', `/scheduled-tasks?session_id=${sessionId}&status=completed&schedule_kind=once`);
  t.same(
    (listed.body.items as any[]).map((x) => x.task_id),
    [taskId],
    'the list filters by session, status and kind',
  );
  const none = await admin.request('GET', `/scheduled-tasks?session_id=${sessionId}&status=active`);
  t.same(none.body.items, []);
});

t.test('an interval task in fresh sessions runs at each due time until cancelled; the history stays', async (t) => {
  const { admin } = await setUp(t);
  const agentId = await chatAgent(admin);
  const created = await admin.request('POST', '/scheduled-tasks', {
    agent_id: agentId,
    schedule_payload: { kind: 'interval', every_seconds: 1 },
    payload: { message: 'Check the order status.' },
  });
  const taskId = created.body.task_id as string;
  const runs = await eventually(async () => {
    const all = await runsOf(admin, taskId);
    return all.filter((r) => r.execution_state === 'succeeded').length >= 2 ? all : undefined;
  }, 'two runs');
  const sessions = new Set(runs.filter((r) => r.execution_state === 'succeeded').map((r) => r.session_id));
  t.equal(sessions.size, runs.filter((r) => r.execution_state === 'succeeded').length, 'each run started its own session (target_mode=new_session)');

  const cancelled = await admin.request('POST', `/scheduled-tasks/${taskId}/cancel`);
  t.same([cancelled.status, cancelled.body.status, cancelled.body.next_run_at], [200, 'cancelled', null]);
  const twice = await admin.request('POST', `/scheduled-tasks/${taskId}/cancel`);
  t.same([twice.status, twice.body.code], [409, 'SCHEDULED_TASK_NOT_ACTIVE'], 'a cancel of a cancelled task is a 409');
  await sleep(500);
  const atCancel = (await runsOf(admin, taskId)).length;
  await sleep(2_500);
  const after = await runsOf(admin, taskId);
  t.equal(after.length, atCancel, 'no run after the cancel');
  t.ok(after.length >= 2, 'the runs before it are kept');
  t.ok(
    after.every((r) => ['succeeded', 'cancelled'].includes(r.execution_state)),
    'every run ended',
  );
});

t.test('a session under human takeover gets the run deferred, and it runs once the takeover ends', async (t) => {
  const { host, admin } = await setUp(t);
  const agentId = await chatAgent(admin, { human_takeover_enabled: true });
  const sessionId = await openSession(admin, agentId, 'taken-over-1');
  const taken = await admin.request('POST', `/sessions/${sessionId}/takeover`, {});
  t.equal(taken.status, 200);
  const created = await admin.request('POST', '/scheduled-tasks', {
    agent_id: agentId,
    session_id: sessionId,
    schedule_payload: { kind: 'once', run_at: inSeconds(1) },
    payload: { message: 'Follow up on the refund.' },
  });
  const taskId = created.body.task_id as string;
  const [deferred] = await eventually(async () => {
    const runs = await runsOf(admin, taskId);
    return runs[0]?.execution_state === 'deferred' ? runs : undefined;
  }, 'the deferred run');
  t.match(deferred.reason, /human takeover/, 'the run says why it waits');
  t.equal(deferred.turn_id, null);
  await sleep(1_500);
  const aiMessages = await query(host.databaseUrl, `SELECT count(*)::int AS n FROM chat_messages WHERE session_id = $1 AND role = 'assistant'`, [sessionId]);
  t.same(aiMessages, [{ n: 1 }], 'no AI message while the session is taken over (only the reply before it)');
  t.equal((await runsOf(admin, taskId))[0].execution_state, 'deferred', 'still deferred while the takeover lasts');

  await admin.request('POST', `/sessions/${sessionId}/release`, {});
  const [done] = await eventually(async () => {
    const runs = await runsOf(admin, taskId);
    return runs[0]?.execution_state === 'succeeded' ? runs : undefined;
  }, 'the run after the release');
  t.ok(done.turn_id, 'the deferred run ran once the takeover ended');
  t.equal((await runsOf(admin, taskId)).length, 1, 'as the same run');
});

t.test('a host stopping fires no more due times and lets the runs working on it end', async (t) => {
  const { host, admin, agentId, release } = await heldRepliesHost(t);
  const once = async (message: string, seconds: number) =>
    (
      await admin.request('POST', '/scheduled-tasks', {
        agent_id: agentId,
        schedule_payload: { kind: 'once', run_at: inSeconds(seconds) },
        payload: { message },
      })
    ).body.task_id as string;
  const taskId = await once('Check the order.', 1);
  await eventually(async () => ((await runsOf(admin, taskId))[0]?.execution_state === 'running' ? true : undefined), 'the run to start');
  const later = await once('Check again.', 0.5);
  const stopped = host.stop();
  // Past the due time of the later task, within the wait for runs (half of config/test.toml's shutdown_timeout_seconds).
  await sleep(1_000);
  release();
  await stopped;
  const [run] = await query(host.databaseUrl, 'SELECT status, turn_id FROM scheduled_task_runs WHERE task_id = $1', [taskId]);
  t.equal(run?.status, 'succeeded', `the run in progress ended before the host stopped: ${JSON.stringify(run)}`);
  t.ok(run?.turn_id, 'with its turn stored');
  t.same(
    await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM scheduled_task_runs WHERE task_id = $1', [later]),
    [{ n: 0 }],
    'a due time that came while the host stopped was left for another instance',
  );
});

t.test('conflict policies: skip records a skipped run while the previous one still runs; defer waits for it', async (t) => {
  const { admin, agentId, hold, release } = await heldRepliesHost(t);
  const task = async (conflict_policy: string) =>
    (
      await admin.request('POST', '/scheduled-tasks', {
        agent_id: agentId,
        schedule_payload: { kind: 'interval', every_seconds: 1 },
        payload: { message: 'Poll the carrier.' },
        conflict_policy,
      })
    ).body.task_id as string;

  const skipping = await task('skip');
  const skipped = await eventually(async () => {
    const runs = await runsOf(admin, skipping);
    return runs.filter((r) => r.execution_state === 'cancelled').length >= 2 ? runs : undefined;
  }, 'skipped runs');
  t.equal(skipped.filter((r) => r.execution_state === 'running').length, 1, 'one run holds the task');
  t.match(
    skipped.find((r) => r.execution_state === 'cancelled').reason,
    /skipped: .*conflict_policy=skip/,
    'a skipped due time is a cancelled run that says so',
  );
  await admin.request('POST', `/scheduled-tasks/${skipping}/cancel`);
  release();
  await eventually(async () => ((await runsOf(admin, skipping)).every((r) => r.execution_state !== 'running') ? true : undefined), 'the held run to end');

  hold();
  const deferring = await task('defer');
  const waiting = await eventually(async () => {
    const runs = await runsOf(admin, deferring);
    return runs.some((r) => r.execution_state === 'deferred') ? runs : undefined;
  }, 'a deferred run');
  await sleep(2_500);
  const still = await runsOf(admin, deferring);
  t.equal(still.filter((r) => r.execution_state === 'deferred').length, 1, 'later due times add no second deferred run: it covers them');
  t.equal(still.length, waiting.length, 'and no other run');
  t.match(still.find((r) => r.execution_state === 'deferred').reason, /conflict_policy=defer/);
  const deferredId = still.find((r) => r.execution_state === 'deferred').run_id;
  await admin.request('POST', `/scheduled-tasks/${deferring}/cancel`);
  const afterCancel = await runsOf(admin, deferring);
  t.equal(afterCancel.find((r) => r.run_id === deferredId).execution_state, 'cancelled', 'a cancel cancels the deferred run');
  release();
});

t.test('a run whose worker stopped is recovered; two instances run each due time once; a missed schedule runs once', async (t) => {
  const first = await setUp(t, { SCHEDULED_TASKS_ENABLED: 'false' });
  const { admin } = first;
  const agentId = await chatAgent(admin);

  // The first instance claims nothing: a task made there waits, readable, until an instance that runs tasks fires it,
  // as for a host that was down over several due times.
  const created = await admin.request('POST', '/scheduled-tasks', {
    agent_id: agentId,
    schedule_payload: { kind: 'interval', every_seconds: 1, start_at: inSeconds(0.5) },
    payload: { message: 'Tick.' },
  });
  const taskId = created.body.task_id as string;
  await sleep(3_500);
  t.same(await runsOf(admin, taskId), [], 'with the scheduler off, the task is readable and nothing runs');

  const resumedAt = Date.now();
  await setUp(t, {}, first.host.databaseUrl);
  await setUp(t, {}, first.host.databaseUrl);
  await eventually(
    async () => ((await runsOf(admin, taskId)).filter((r) => r.execution_state === 'succeeded').length >= 3 ? true : undefined),
    'runs on the two running instances',
  );
  await admin.request('POST', `/scheduled-tasks/${taskId}/cancel`);
  // A due time that came while a slow run still ran is a skipped run (conflict_policy=skip): it counts as a due time.
  const all = await eventually(async () => {
    const listed = await runsOf(admin, taskId);
    return listed.every((r) => ['succeeded', 'cancelled'].includes(r.execution_state)) ? listed : undefined;
  }, 'every run to end');
  const runs = all.filter((r) => r.execution_state === 'succeeded');
  const dueTimes = all.map((r) => new Date(r.due_at).getTime()).sort();
  t.equal(new Set(dueTimes).size, all.length, 'each due time ran once across two instances');
  t.equal(dueTimes.filter((at) => at < resumedAt).length, 1, 'the three due times missed while no instance ran tasks ran once');
  t.ok(
    dueTimes.slice(1).every((at, i) => at - dueTimes[i]! >= 1_000),
    'then the rhythm went on, one run per second',
  );
  const turns = await query(first.host.databaseUrl, 'SELECT count(*)::int AS n FROM conversation_turns WHERE id = ANY($1::uuid[])', [
    runs.map((r) => r.turn_id),
  ]);
  t.same(turns, [{ n: runs.length }], 'one turn per run');

  // A worker killed mid-run leaves its run `running` under a lease nobody renews.
  const once = await admin.request('POST', '/scheduled-tasks', {
    agent_id: agentId,
    schedule_payload: { kind: 'once', run_at: inSeconds(3_600) },
    payload: { message: 'Recover me.' },
  });
  const onceId = once.body.task_id as string;
  await heldRun(first.host.databaseUrl, onceId, { dueAgo: 60, leaseEnds: -1, beatAgo: 20 });
  const recovered = await eventually(async () => {
    const [run] = await runsOf(admin, onceId);
    return run?.execution_state === 'succeeded' ? run : undefined;
  }, 'the recovered run');
  t.equal(recovered.attempt_count, 2, 'a second worker claimed it');
  t.ok(recovered.turn_id, 'and ran its turn');
});

t.test('a run whose lease lapsed reads heartbeat_expired until recovered; a stale heartbeat is flagged', async (t) => {
  const { host, admin } = await setUp(t, { SCHEDULED_TASKS_ENABLED: 'false' });
  const agentId = await chatAgent(admin);
  const created = await admin.request('POST', '/scheduled-tasks', {
    agent_id: agentId,
    schedule_payload: { kind: 'once', run_at: inSeconds(3_600) },
    payload: { message: 'x' },
  });
  const taskId = created.body.task_id as string;
  await heldRun(host.databaseUrl, taskId, { dueAgo: 120, leaseEnds: -1, beatAgo: 30, createdAgo: 60 });
  await heldRun(host.databaseUrl, taskId, { dueAgo: 60, leaseEnds: 5, beatAgo: 9 });
  const runs = await runsOf(admin, taskId);
  t.same(
    runs.map((r) => [r.execution_state, r.heartbeat_stale]),
    [
      ['running', true],
      ['heartbeat_expired', true],
    ],
    'lease lapsed: heartbeat_expired; no heartbeat for two thirds of the lease: stale',
  );
});

t.test("limits: active tasks per session and per agent, the agent's request limits for runs, and agent_type changes", async (t) => {
  const { admin } = await setUp(t, {
    AGENT_HOST__SCHEDULED_TASKS__MAX_ACTIVE_PER_SESSION: '1',
    AGENT_HOST__SCHEDULED_TASKS__MAX_ACTIVE_PER_AGENT: '2',
  });
  const agentId = await chatAgent(admin);
  const sessionId = await openSession(admin, agentId, 'limits-1');
  const make = (extra: Record<string, unknown>) =>
    admin.request('POST', '/scheduled-tasks', {
      agent_id: agentId,
      schedule_payload: { kind: 'once', run_at: inSeconds(3_600) },
      payload: { message: 'later' },
      ...extra,
    });
  t.equal((await make({ session_id: sessionId })).status, 201);
  const perSession = await make({ session_id: sessionId });
  t.same([perSession.status, perSession.body.code], [409, 'SCHEDULED_TASK_LIMIT'], 'one more than max_active_per_session is refused');
  t.match(perSession.body.detail, /max_active_per_session/);
  t.equal((await make({})).status, 201, 'another session (a fresh one per run) still has room');
  const perAgent = await make({});
  t.same([perAgent.status, perAgent.body.code], [409, 'SCHEDULED_TASK_LIMIT'], 'one more than max_active_per_agent is refused');
  t.match(perAgent.body.detail, /max_active_per_agent/);

  const retype = await admin.request('PATCH', `/agents/${agentId}`, { agent_type: 'etl' });
  t.equal(retype.status, 409, 'an agent with active tasks keeps agent_type chat');
  t.match(retype.body.detail, /2 active scheduled tasks/);

  // A run is a turn like any other: an agent out of requests fails it with the limit's code.
  const limited = await chatAgent(admin, { max_requests_per_day: 1 });
  await openSession(admin, limited, 'limits-2');
  const created = await admin.request('POST', '/scheduled-tasks', {
    agent_id: limited,
    session_id: 'limits-2',
    schedule_payload: { kind: 'once', run_at: inSeconds(1) },
    payload: { message: 'one request too many' },
  });
  const [failed] = await eventually(async () => {
    const runs = await runsOf(admin, created.body.task_id);
    return runs[0]?.execution_state === 'failed' ? runs : undefined;
  }, 'the run refused by the agent limit');
  t.match(failed.reason, /max_requests_per_day/, "the run failed on the agent's daily request limit, and says so");
});
