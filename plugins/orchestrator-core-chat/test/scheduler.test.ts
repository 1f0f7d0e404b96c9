// The scheduler stage of core_chat_v1: the English rules that read scheduling requests without a model, the model's
// reading of the rest, and the replies, through a fake scheduling handle (core's own rules are tested with the host).
import t from 'tap';
import { fakeScheduling, fakeTurnContext, scriptedModel } from '@agent-host/sdk/testing';
import { mentionsScheduling, parseSchedulingRequest } from '../src/lib/schedule-parser.js';
import { runScheduler } from '../src/lib/scheduler-stage.js';

// Friday 20 March 2026, 11:00 in Berlin (CET, UTC+1); Berlin moves to CEST on Sunday 29 March.
const NOW = new Date('2026-03-20T10:00:00.000Z');
const BERLIN = 'Europe/Berlin';
const read = (message: string, now = NOW) => parseSchedulingRequest(message, now, BERLIN);

t.test('the English rules read common requests, in the user time zone', async (t) => {
  t.same(read('Remind me in 10 minutes to call Ana.'), {
    intent: 'create',
    schedule: { kind: 'once', run_at: '2026-03-20T10:10:00.000Z', time_zone: BERLIN },
    task: 'call Ana',
  });
  t.same(read('please remind me in two hours to check the order status'), {
    intent: 'create',
    schedule: { kind: 'once', run_at: '2026-03-20T12:00:00.000Z', time_zone: BERLIN },
    task: 'check the order status',
  });
  t.same(
    read('remind me at 17:30 to leave for the station'),
    {
      intent: 'create',
      schedule: { kind: 'once', run_at: '2026-03-20T16:30:00.000Z', time_zone: BERLIN },
      task: 'leave for the station',
    },
    'a time later today is today',
  );
  t.same(
    (read('remind me at 9am to stretch') as { schedule: unknown }).schedule,
    { kind: 'once', run_at: '2026-03-21T08:00:00.000Z', time_zone: BERLIN },
    'a time already past today is tomorrow',
  );
  t.same((read('Remind me tomorrow at 9 to water the plants') as { schedule: unknown; task: string }).task, 'water the plants');
  t.same(
    (read('remind me tomorrow at 9 to water the plants', new Date('2026-03-28T10:00:00Z')) as { schedule: unknown }).schedule,
    { kind: 'once', run_at: '2026-03-29T07:00:00.000Z', time_zone: BERLIN },
    '9:00 on the day the clocks move is 9:00 summer time',
  );
  t.same(read('remind me every weekday at 9:00 to send the stand-up notes'), {
    intent: 'create',
    schedule: { kind: 'cron', expression: '0 9 * * 1-5', time_zone: BERLIN },
    task: 'send the stand-up notes',
  });
  t.same((read('Remind me every day at 18:15 to log my hours') as { schedule: unknown }).schedule, {
    kind: 'cron',
    expression: '15 18 * * *',
    time_zone: BERLIN,
  });
  t.same((read('remind me every Monday at 9am to plan the week') as { schedule: unknown }).schedule, {
    kind: 'cron',
    expression: '0 9 * * 1',
    time_zone: BERLIN,
  });
  t.same(read('remind me every 2 hours to stretch'), { intent: 'create', schedule: { kind: 'interval', every_seconds: 7200 }, task: 'stretch' });
  t.same((read('Schedule cron 30 8 * * 1-5 to read the overnight tickets') as { schedule: unknown }).schedule, {
    kind: 'cron',
    expression: '30 8 * * 1-5',
    time_zone: BERLIN,
  });
  t.same(read('What are my reminders?'), { intent: 'list' });
  t.same(read('cancel all reminders'), { intent: 'cancel', all: true, about: '' });
  t.same(read('Please cancel the reminder about the plants'), { intent: 'cancel', all: false, about: 'Please plants' });
  t.equal(read('The parcel arrives in two hours'), undefined, 'a time without a request is only talk');
  t.equal(read('Hello, where is my parcel?'), undefined);
  t.equal(read('remind me about the parcel'), undefined, 'a request without a time the rules know is left to a model');
  t.ok(mentionsScheduling('check the order status in two hours'), 'a message naming a time is worth asking a model');
  t.notOk(mentionsScheduling('Hello, where is my parcel?'), 'other messages cost no model call');
});

/** A turn of the stage with a fake handle; the tool-call model is `offline` unless a script is given. */
function turn(message: string, options: { script?: string; handle?: ReturnType<typeof fakeScheduling>; messageType?: 'user_chat' | 'rule' } = {}) {
  const model = scriptedModel(options.script ? [{ tokens: [options.script] }] : []);
  const base = fakeTurnContext(model);
  const scheduling = options.handle ?? fakeScheduling({ time_zone: BERLIN });
  const context = fakeTurnContext(model, {
    message,
    message_type: options.messageType ?? 'user_chat',
    scheduling,
    models: options.script ? base.models : { ...base.models, choose: (stage) => ({ ...base.models.choose(stage), model_provider: 'offline' }) },
  });
  return { context, model, scheduling };
}

t.test('the stage makes, lists and cancels tasks through the handle, and says what it did', async (t) => {
  const handle = fakeScheduling({ time_zone: BERLIN });
  const made = await runScheduler(turn('Remind me tomorrow at 9 to water the plants', { handle }).context, NOW);
  t.equal(handle.tasks.length, 1, 'one task');
  t.equal(handle.requests[0]!.message, 'Reminder: water the plants', 'the agent will be told the task');
  t.equal(made!.reply, 'Scheduled: I will remind you to water the plants on Sat 21 Mar, 09:00 (Europe/Berlin).');
  t.same(made!.decision, { intent: 'create', read_by: 'rules', outcome: 'created', task_ids: [handle.tasks[0]!.task_id] });

  await runScheduler(turn('remind me every 2 hours to stretch', { handle }).context);
  const listed = await runScheduler(turn('What are my reminders?', { handle }).context);
  t.match(listed!.reply, /1\. water the plants: on .*\n2\. stretch: every 2 hours/);

  const ambiguous = await runScheduler(turn('cancel my reminder', { handle }).context);
  t.same(
    [ambiguous!.decision.outcome, handle.tasks.filter((x) => x.status === 'active').length],
    ['asked', 2],
    'with two tasks and no words to tell them apart, it asks',
  );
  const cancelled = await runScheduler(turn('cancel the reminder about the plants', { handle }).context);
  t.equal(cancelled!.reply, 'Cancelled: water the plants.');
  t.same(
    handle.tasks.map((x) => x.status),
    ['cancelled', 'active'],
    'the task the words name',
  );
});

t.test("core's refusal is the reply; a rule message and a plain chat message are not the stage's", async (t) => {
  const refused = await runScheduler(
    turn('remind me in 10 minutes to call Ana', { handle: fakeScheduling({ refuse: 'scheduling is not offered in public chats on this host' }) }).context,
  );
  t.equal(refused!.reply, 'I could not schedule that: scheduling is not offered in public chats on this host.');
  t.equal(refused!.decision.outcome, 'refused');

  const rule = turn('[message_type=rule] Reminder: remind me in 10 minutes to call Ana', { messageType: 'rule', script: '{"intent":"list"}' });
  t.equal(await runScheduler(rule.context), null, "a scheduled run's own message is not a request");
  t.equal(rule.model.calls.length, 0, 'and costs no model call');

  const chat = turn('Where is my parcel?', { script: '{"intent":"list"}' });
  t.equal(await runScheduler(chat.context), null);
  t.equal(chat.model.calls.length, 0, 'a message that names no time costs no model call');
});

t.test('the tool-call model reads what the rules cannot; the offline model is not asked', async (t) => {
  const answer = '{"intent":"create","task":"check the order status","schedule":{"kind":"once","run_at":"2026-03-20T12:00:00+01:00"}}';
  const byModel = turn('check the order status in two hours, please', { script: answer });
  const done = await runScheduler(byModel.context);
  t.equal(byModel.model.calls.length, 1, 'one call of the tool-call model');
  t.match(byModel.model.calls[0]!.messages[0]!.content, /Europe\/Berlin/, "it is told the user's time zone");
  t.same(byModel.scheduling.requests[0], {
    schedule: { kind: 'once', run_at: '2026-03-20T12:00:00+01:00', time_zone: BERLIN },
    message: 'Reminder: check the order status',
  });
  t.same([done!.decision.read_by, done!.decision.outcome], ['model', 'created']);

  const none = turn('I will be home in two hours', { script: '{"intent":"none"}' });
  t.equal(await runScheduler(none.context), null, 'the model may say it is no request');
  const garbage = turn('I will be home in two hours', { script: 'Sure! Here you go.' });
  t.equal(await runScheduler(garbage.context), null, 'an answer that is no JSON reads as none');

  const offline = turn('check the order status in two hours');
  t.equal(await runScheduler(offline.context), null, 'on the offline model, what the rules cannot read stays chat');
  t.equal(offline.model.calls.length, 0);
});
