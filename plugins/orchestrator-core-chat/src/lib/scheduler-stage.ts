import type { ChatMessage, ScheduledTaskSummary, ScheduleRequest, TurnContext } from '@agent-host/sdk';
import { mentionsScheduling, parseSchedulingRequest, type SchedulingIntent } from './schedule-parser.js';

/** What the scheduler stage decided, for the turn's observation. */
export interface SchedulerDecision {
  intent: SchedulingIntent['intent'];
  /** `rules`: the English parser read it; `model`: the tool-call model did. */
  read_by: 'rules' | 'model';
  outcome: 'created' | 'listed' | 'cancelled' | 'refused' | 'asked';
  task_ids: string[];
  reason?: string;
}

const INSTRUCTIONS = (
  now: Date,
  zone: string,
) => `You decide whether the user's message asks to schedule a reminder or task, to list their scheduled tasks, or to cancel one.
Answer with one JSON object and nothing else:
- {"intent":"none"} when it asks none of these;
- {"intent":"create","task":"<what to do, in the user's words>","schedule":S} where S is {"kind":"once","run_at":"<ISO 8601 with offset>"}, {"kind":"interval","every_seconds":<n>} or {"kind":"cron","expression":"<five fields>"};
- {"intent":"list"};
- {"intent":"cancel","all":<true|false>,"about":"<words naming the task>"}.
The time now is ${now.toISOString()}; the user's time zone is ${zone}.`;

/** The model's reading of the message, when it is one of the intents; anything else reads as none. */
function readModelAnswer(text: string, zone: string): SchedulingIntent | undefined {
  const json = /\{[\s\S]*\}/.exec(text)?.[0];
  if (!json) return undefined;
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (answer.intent === 'list') return { intent: 'list' };
  if (answer.intent === 'cancel') return { intent: 'cancel', all: answer.all === true, about: typeof answer.about === 'string' ? answer.about : '' };
  const schedule = answer.schedule as ScheduleRequest | undefined;
  if (answer.intent !== 'create' || typeof schedule !== 'object' || schedule === null || !['once', 'interval', 'cron'].includes(schedule.kind))
    return undefined;
  const withZone = schedule.kind === 'interval' ? schedule : { ...schedule, time_zone: schedule.time_zone ?? zone };
  return { intent: 'create', schedule: withZone, task: typeof answer.task === 'string' ? answer.task : '' };
}

const localTime = (iso: string, zone: string) =>
  new Intl.DateTimeFormat('en-GB', { timeZone: zone, weekday: 'short', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit' }).format(
    new Date(iso),
  );

/** A task's schedule in words, in the user's time zone. */
function describe(task: ScheduledTaskSummary, zone: string): string {
  const { schedule } = task;
  if (schedule.kind === 'interval') {
    const seconds = Number(schedule.every_seconds);
    const [n, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
    return `every ${n === 1 ? unit : `${n} ${unit}s`}`;
  }
  if (schedule.kind === 'cron') return `on the schedule "${String(schedule.expression)}" (${String(schedule.time_zone)})`;
  return `on ${localTime(task.next_run_at ?? String(schedule.run_at), zone)}`;
}

const next = (task: ScheduledTaskSummary, zone: string) => (task.next_run_at ? `next on ${localTime(task.next_run_at, zone)} (${zone})` : 'no further runs');

/** The task's words without the `Reminder:` the stage stores them with. */
const taskWords = (task: ScheduledTaskSummary) => task.message.replace(/^Reminder:\s*/, '');

/** Which of `tasks` a cancel means: all, the one whose words share the most with `about`, or the only one. */
function chooseTasks(tasks: ScheduledTaskSummary[], intent: { all: boolean; about: string }): ScheduledTaskSummary[] {
  if (intent.all) return tasks;
  const words = new Set(intent.about.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);
  const scored = tasks
    .map((task) => ({
      task,
      score: (
        taskWords(task)
          .toLowerCase()
          .match(/[\p{L}\p{N}]{3,}/gu) ?? []
      ).filter((w) => words.has(w)).length,
    }))
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score);
  if (scored.length > 0 && (scored.length === 1 || scored[0]!.score > scored[1]!.score)) return [scored[0]!.task];
  return tasks.length === 1 ? tasks : [];
}

/** Reads the message: the English rules first, then, where the message names a time, the tool-call model. */
async function readIntent(context: TurnContext, now: Date): Promise<{ intent: SchedulingIntent; readBy: 'rules' | 'model' } | undefined> {
  const zone = context.scheduling.time_zone;
  const byRules = parseSchedulingRequest(context.message, now, zone);
  if (byRules) return { intent: byRules, readBy: 'rules' };
  // The offline model answers no prompt: what the rules cannot read stays a chat message.
  if (!mentionsScheduling(context.message) || context.models.choose('tool_call').model_provider === 'offline') return undefined;
  const messages: ChatMessage[] = [
    { role: 'system', content: INSTRUCTIONS(now, zone) },
    { role: 'user', content: context.message },
  ];
  const answer = await context.models.chatModel('tool_call').invoke(messages, { signal: context.signal });
  const byModel = readModelAnswer(answer.content, zone);
  return byModel && { intent: byModel, readBy: 'model' };
}

/**
 * The scheduler stage of `core_chat_v1` (spec 4.6): a user's message that asks to schedule a task, list the session's
 * tasks or cancel one is answered here, through the turn's scheduling handle (core enforces the limits and who may
 * schedule), with a reply that says what was done and when, in the user's time zone. Null for any other message,
 * and for messages that are not a user's chat (a scheduled run's own message included).
 */
export function runScheduler(context: TurnContext, now = new Date()): Promise<{ reply: string; decision: SchedulerDecision } | null> {
  return context.trace.span('scheduler', async (attributes) => {
    const read = context.message_type === 'user_chat' ? await readIntent(context, now) : undefined;
    attributes.intent = read?.intent.intent ?? 'none';
    if (!read) return null;
    const { intent, readBy } = read;
    const zone = context.scheduling.time_zone;
    const decided = (reply: string, outcome: SchedulerDecision['outcome'], tasks: ScheduledTaskSummary[] = [], reason?: string) => {
      attributes.outcome = outcome;
      return { reply, decision: { intent: intent.intent, read_by: readBy, outcome, task_ids: tasks.map((t) => t.task_id), ...(reason && { reason }) } };
    };
    if (intent.intent === 'create') {
      const task = intent.task || 'the reminder you asked for';
      const made = await context.scheduling.create({ schedule: intent.schedule, message: `Reminder: ${task}` });
      if (made.status === 'refused') return decided(`I could not schedule that: ${made.reason}.`, 'refused', [], made.reason);
      const when = made.task.schedule.kind === 'once' ? `${describe(made.task, zone)} (${zone})` : `${describe(made.task, zone)}; ${next(made.task, zone)}`;
      return decided(`Scheduled: I will remind you to ${task} ${when}.`, 'created', [made.task]);
    }
    const tasks = await context.scheduling.list();
    if (intent.intent === 'list') {
      if (!tasks.length) return decided('You have no scheduled reminders in this conversation.', 'listed');
      const lines = tasks.map((t, i) => `${i + 1}. ${taskWords(t)}: ${describe(t, zone)}, ${next(t, zone)}`);
      return decided(`Your scheduled reminders:\n${lines.join('\n')}`, 'listed', tasks);
    }
    const chosen = chooseTasks(tasks, intent);
    if (!chosen.length) {
      if (!tasks.length) return decided('There is no scheduled reminder in this conversation to cancel.', 'refused', [], 'no active task');
      const lines = tasks.map((t, i) => `${i + 1}. ${taskWords(t)}`);
      return decided(`Which reminder should I cancel?\n${lines.join('\n')}`, 'asked', tasks);
    }
    const cancelled: ScheduledTaskSummary[] = [];
    for (const task of chosen) {
      const outcome = await context.scheduling.cancel(task.task_id);
      if (outcome.status === 'done') cancelled.push(outcome.task);
    }
    return decided(`Cancelled: ${cancelled.map(taskWords).join('; ')}.`, 'cancelled', cancelled);
  });
}
