// Scheduled tasks made in a conversation (spec 4.6): core_chat_v1's scheduler stage reads the request on the offline
// model, core makes the task through the turn's scheduling handle, and at the due time the run's reply reaches the
// session over WebSocket like any chat reply.
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { stream, tokensOf } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function setUp(t: Parameters<typeof startTestHost>[0], env: Record<string, string> = {}) {
  const host = await startTestHost(t, { env });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agentId = (await admin.request('POST', '/agents', { name: 'Assistant', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body
    .agent_id as string;
  const sockets: WsClient[] = [];
  t.teardown(() => sockets.forEach((s) => s.close()));
  const connect = async (...args: Parameters<typeof WsClient.connect>) => {
    const client = await WsClient.connect(...args);
    sockets.push(client);
    return client;
  };
  return { host, admin, agentId, connect };
}

t.test('an administrator schedules, lists and cancels in chat; the reminder arrives in the session at its time', async (t) => {
  const { host, admin, agentId, connect } = await setUp(t);
  const me = (await admin.request('GET', '/admin/auth/me')).body;
  const say = async (message: string) => {
    const { events } = await admin.stream({ thread_id: 'plan-1', agent_id: agentId, message });
    return { reply: tokensOf(events), done: events.at(-1) as { turn_id: string } };
  };
  const asked = await say('Remind me in 2 seconds to send the stand-up notes');
  const watcher = await connect(host.url, '/ws/plan-1', {
    cookie: admin.cookieHeader(),
    query: { role: 'operator', operator_id: me.admin_user_id, operator_name: 'Watcher' },
  });
  t.match(asked.reply, /^Scheduled: I will remind you to send the stand-up notes on \w{3} \d+ \w{3}, \d\d:\d\d \(UTC\)\.$/, 'the reply says what and when');
  const [task] = (await admin.request('GET', '/scheduled-tasks?session_id=plan-1')).body.items;
  t.match(task, {
    agent_id: agentId,
    session_id: 'plan-1',
    schedule_kind: 'once',
    payload: { message: 'Reminder: send the stand-up notes' },
    target_mode: 'origin_session',
    created_via: 'chat',
    created_by: me.admin_user_id,
    status: 'active',
  });

  const context = (await admin.request('GET', `/sessions/plan-1/turns/${asked.done.turn_id}/context`)).body;
  t.match(
    context.context_payload.observation.scheduler,
    { intent: 'create', read_by: 'rules', outcome: 'created', task_ids: [task.task_id] },
    "the stage's decision is in the turn context",
  );
  t.ok(
    ['scheduler', 'scheduled-task-create'].every((name) => context.context_payload.trace_spans.some((s: { name: string }) => s.name === name)),
    'with its spans',
  );

  const reminder = await watcher.waitFor('message', (m) => m.message.role === 'assistant' && m.message.turn_id !== asked.done.turn_id, 15_000);
  t.match(reminder.message.content, 'send the stand-up notes', 'the reminder reached the session over WebSocket');
  const [run] = await eventually(async () => {
    const runs = (await admin.request('GET', `/scheduled-tasks/${task.task_id}/runs`)).body.items;
    return runs[0]?.execution_state === 'succeeded' ? runs : undefined;
  }, 'the run');
  t.equal(run.turn_id, reminder.message.turn_id, 'the run links the turn whose reply was broadcast');
  const messages = (await admin.request('GET', '/sessions/plan-1/messages')).body.items as { turn_id: string; role: string }[];
  t.ok(
    messages.some((m) => m.turn_id === run.turn_id && m.role === 'assistant'),
    'and the reply is in GET /sessions/.../messages',
  );

  t.match(
    (await say('remind me every 10 seconds to blink')).reply,
    /^I could not schedule that: every 10 s is shorter than \[scheduled_tasks\] min_interval_seconds = 60\.$/,
    'a refusal is the reply',
  );
  t.match((await say('Remind me every 2 hours to stretch')).reply, /^Scheduled: I will remind you to stretch every 2 hours/);
  t.match((await say('What are my reminders?')).reply, /^Your scheduled reminders:\n1\. stretch: every 2 hours, next on /, 'the list has the active task only');
  t.equal((await say('Cancel the stretch reminder')).reply, 'Cancelled: stretch.');
  t.same(
    ((await admin.request('GET', '/scheduled-tasks?session_id=plan-1')).body.items as { status: string }[]).map((x) => x.status),
    ['cancelled', 'completed'],
    'cancelled in chat, kept in the history; the refused request stored nothing',
  );
  t.equal((await say('What are my reminders?')).reply, 'You have no scheduled reminders in this conversation.');

  // The caller's time zone, given once, is kept on the session: times are read and confirmed in it.
  const inZone = async (message: string, extra: Record<string, unknown> = {}) => {
    const { events } = await admin.stream({ thread_id: 'plan-tz', agent_id: agentId, message, ...extra });
    return tokensOf(events);
  };
  const berlinTime = (iso: string) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' }).format(new Date(iso));
  t.match(
    await inZone('Remind me at 17:30 to call Ana', { time_zone: 'europe/berlin' }),
    /^Scheduled: I will remind you to call Ana on .*, 17:30 \(Europe\/Berlin\)\.$/,
  );
  t.match(
    await inZone('Remind me tomorrow at 9 to water the plants'),
    /, 09:00 \(Europe\/Berlin\)\.$/,
    "a later message without time_zone keeps the session's",
  );
  const zoned = (await admin.request('GET', '/scheduled-tasks?session_id=plan-tz')).body.items as { next_run_at: string }[];
  t.same(zoned.map((task) => berlinTime(task.next_run_at)).sort(), ['09:00', '17:30'], 'the due times are those hours in Berlin');
  const bad = await admin.request('POST', '/stream', { thread_id: 'plan-tz', agent_id: agentId, message: 'hello', time_zone: 'Mars/Olympus' });
  t.equal(bad.status, 422);
  t.match(bad.body.detail, [{ loc: ['body', 'time_zone'] }]);
});

t.test('a public chat schedules only where the host allows it, and hears the reminder on its socket', async (t) => {
  const closed = await setUp(t);
  const refused = await stream(closed.host.url, { agent_id: closed.agentId, message: 'Remind me in 2 seconds to check the order status' });
  t.equal(tokensOf(refused.events), 'I could not schedule that: scheduling is not offered in public chats on this host.');
  t.same(await query(closed.host.databaseUrl, 'SELECT count(*)::int AS n FROM scheduled_tasks'), [{ n: 0 }], 'nothing was stored');

  const open = await setUp(t, { AGENT_HOST__SCHEDULED_TASKS__ALLOW_ANONYMOUS: 'true' });
  const sessionId = (await (await fetch(`${open.host.url}/public/agents/${open.agentId}/sessions`, { method: 'POST' })).json()).session_id as string;
  const customer = await open.connect(open.host.url, `/public/ws/${sessionId}`, { query: { agent_id: open.agentId } });
  await customer.waitFor('session');
  t.same(await customer.send('user_message', { content: 'Remind me in 2 seconds to check the order status' }), { ok: true });
  const confirmation = await customer.waitFor('message', (m) => m.message.role === 'assistant');
  t.match(confirmation.message.content, /^Scheduled: I will remind you to check the order status/);
  const reminder = await customer.waitFor('message', (m) => m.message.role === 'assistant' && m.message.turn_id !== confirmation.message.turn_id, 15_000);
  t.match(reminder.message.content, 'check the order status', "the reminder reached the customer's socket");
  const [task] = await query(open.host.databaseUrl, 'SELECT created_via, created_by, caller_key FROM scheduled_tasks');
  t.match(task, { created_via: 'chat', created_by: null, caller_key: /^ip:/ }, 'made for the anonymous caller, whose quota its runs count toward');
});
