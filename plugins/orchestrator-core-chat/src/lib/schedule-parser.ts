import type { ScheduleRequest } from '@agent-host/sdk';

/** What a message asks of the scheduler, read without a language model. */
export type SchedulingIntent =
  { intent: 'create'; schedule: ScheduleRequest; task: string } | { intent: 'list' } | { intent: 'cancel'; all: boolean; about: string };

const NUMBER_WORDS: Record<string, number> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  fifteen: 15,
  twenty: 20,
  thirty: 30,
};
const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, min: 60, hour: 3600, hr: 3600, day: 86_400, week: 604_800 };
const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

const NUMBER = `(\\d+|${Object.keys(NUMBER_WORDS).join('|')})`;
const UNIT = '(seconds?|minutes?|mins?|hours?|hrs?|days?|weeks?)';
const TIME = '(?:at\\s+)?(noon|midnight|\\d{1,2}(?::\\d{2})?\\s*(?:am|pm)?)';

/** Words that make a message a request to schedule; without one, times in a message are only talk. */
const CREATE_CUE = /\b(remind me|set (?:up )?a reminder|schedule)\b/i;
const LIST = /\b(what|which|list|show)\b[^.?!]*\b(reminders?|scheduled tasks?|schedules?)\b|\bmy reminders\b/i;
const CANCEL = /\b(cancel|stop|delete|remove)\b[^.?!]*\b(reminders?|scheduled tasks?|schedules?|tasks?)\b/i;

const count = (word: string) => NUMBER_WORDS[word.toLowerCase()] ?? Number(word);
const unitSeconds = (unit: string) => UNIT_SECONDS[unit.toLowerCase().replace(/s$/, '')]!;

/** `17:30`, `9`, `9am`, `12:15 pm`, `noon`, `midnight` as hour and minute; undefined when not a time of day. */
function timeOfDay(text: string): { hour: number; minute: number } | undefined {
  const value = text.trim().toLowerCase();
  if (value === 'noon') return { hour: 12, minute: 0 };
  if (value === 'midnight') return { hour: 0, minute: 0 };
  const match = /^(\d{1,2})(?::(\d{2}))?\s*(am|pm)?$/.exec(value);
  if (!match) return undefined;
  let hour = Number(match[1]);
  const minute = Number(match[2] ?? 0);
  if (match[3] === 'pm' && hour < 12) hour += 12;
  if (match[3] === 'am' && hour === 12) hour = 0;
  return hour < 24 && minute < 60 ? { hour, minute } : undefined;
}

/** Milliseconds `zone` is ahead of UTC at `at`. */
function zoneOffset(zone: string, at: number): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
      .formatToParts(at)
      .map((p) => [p.type, Number(p.value)]),
  );
  return Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) - Math.floor(at / 1000) * 1000;
}

/** The local date in `zone` of `at`, as year, month (1-12) and day. */
function localDate(zone: string, at: number): [number, number, number] {
  const shifted = new Date(at + zoneOffset(zone, at));
  return [shifted.getUTCFullYear(), shifted.getUTCMonth() + 1, shifted.getUTCDate()];
}

/** The moment a local wall-clock time in `zone` is (the offset taken at that moment, so DST days come out right). */
function atLocal(zone: string, [year, month, day]: [number, number, number], { hour, minute }: { hour: number; minute: number }): Date {
  const guess = Date.UTC(year, month - 1, day, hour, minute);
  const first = guess - zoneOffset(zone, guess);
  return new Date(guess - zoneOffset(zone, first));
}

const nextDay = ([year, month, day]: [number, number, number]): [number, number, number] => {
  const date = new Date(Date.UTC(year, month - 1, day + 1));
  return [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
};

/** The schedule a message names, with the words that named it; undefined when it names none the parser knows. */
function findSchedule(message: string, now: Date, zone: string): { schedule: ScheduleRequest; matched: string } | undefined {
  const find = (pattern: string) => new RegExp(pattern, 'i').exec(message);
  let m: RegExpExecArray | null;
  if ((m = find('\\bcron\\s+`?((?:[\\d*/,\\-A-Za-z]+\\s+){4}[\\d*/,\\-A-Za-z]+)`?'))) {
    return { schedule: { kind: 'cron', expression: m[1]!, time_zone: zone }, matched: m[0] };
  }
  if ((m = find(`\\bevery\\s+(week ?days?|work ?days?|days?|mornings?|${DAYS.join('|')})s?\\s+${TIME}`)) || (m = find(`\\bdaily\\s+${TIME}`))) {
    const [what, when] = m.length > 2 ? [m[1]!.toLowerCase(), m[2]!] : ['day', m[1]!];
    const time = timeOfDay(when);
    if (!time) return undefined;
    const day = what.startsWith('week') || what.startsWith('work') ? '1-5' : DAYS.includes(what) ? String(DAYS.indexOf(what)) : '*';
    return { schedule: { kind: 'cron', expression: `${time.minute} ${time.hour} * * ${day}`, time_zone: zone }, matched: m[0] };
  }
  if ((m = find(`\\bevery\\s+(?:${NUMBER}\\s+)?${UNIT}`))) {
    return { schedule: { kind: 'interval', every_seconds: count(m[1] ?? '1') * unitSeconds(m[2]!) }, matched: m[0] };
  }
  if ((m = find(`\\bin\\s+${NUMBER}\\s+${UNIT}`)) || (m = find(`\\bin\\s+(half)\\s+an?\\s+(hour)`))) {
    const seconds = m[1] === 'half' ? 1800 : count(m[1]!) * unitSeconds(m[2]!);
    return { schedule: { kind: 'once', run_at: new Date(now.getTime() + seconds * 1000).toISOString(), time_zone: zone }, matched: m[0] };
  }
  if ((m = find(`\\btomorrow(?:\\s+${TIME})?`))) {
    const time = m[1] ? timeOfDay(m[1]) : { hour: 9, minute: 0 };
    if (!time) return undefined;
    const runAt = atLocal(zone, nextDay(localDate(zone, now.getTime())), time);
    return { schedule: { kind: 'once', run_at: runAt.toISOString(), time_zone: zone }, matched: m[0] };
  }
  if ((m = find(`\\bat\\s+(noon|midnight|\\d{1,2}(?::\\d{2})?\\s*(?:am|pm)?)(?![\\d:])`))) {
    const time = timeOfDay(m[1]!);
    if (!time) return undefined;
    const today = localDate(zone, now.getTime());
    let runAt = atLocal(zone, today, time);
    if (runAt <= now) runAt = atLocal(zone, nextDay(today), time);
    return { schedule: { kind: 'once', run_at: runAt.toISOString(), time_zone: zone }, matched: m[0] };
  }
  return undefined;
}

/** The task's words: the message without the request and the schedule ("remind me at 9 to call Ana" is "call Ana"). */
function taskText(message: string, matched: string): string {
  return message
    .replace(matched, ' ')
    .replace(/^\s*(please\s+|can you\s+|could you\s+)?/i, '')
    .replace(CREATE_CUE, ' ')
    .replace(/\s+/g, ' ')
    .replace(/^\s*(to|that|about|of)\s+/i, '')
    .replace(/^[\s,.:;-]+|[\s,.!?;:-]+$/g, '')
    .trim();
}

/**
 * Reads common English scheduling requests: "remind me in 10 minutes to ...", "at 17:30", "tomorrow at 9", "every day
 * at 9:00", "every weekday at 9", "every Monday at 9am", "every 2 hours", "cron 0 9 * * 1-5"; "what are my reminders";
 * "cancel the reminder about ...", "cancel all reminders". Times of day are read in `zone`. Undefined for anything
 * else, which the scheduler stage may still hand to a language model.
 */
export function parseSchedulingRequest(message: string, now: Date, zone: string): SchedulingIntent | undefined {
  if (CANCEL.test(message) && !CREATE_CUE.test(message)) {
    const all = /\ball\b/i.test(message);
    const about = message
      .replace(CANCEL, ' ')
      .replace(/\b(the|my|all|about|for|of|to)\b/gi, ' ')
      .replace(/[^\p{L}\p{N}\s]/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim();
    return { intent: 'cancel', all, about };
  }
  if (LIST.test(message) && !CREATE_CUE.test(message)) return { intent: 'list' };
  if (!CREATE_CUE.test(message)) return undefined;
  const found = findSchedule(message, now, zone);
  if (!found) return undefined;
  return { intent: 'create', schedule: found.schedule, task: taskText(message, found.matched) };
}

const TIME_TALK = new RegExp(`\\b(in\\s+${NUMBER}\\s+${UNIT}|every|daily|weekly|tomorrow|at\\s+\\d{1,2}(:\\d{2})?\\s*(am|pm)?\\b)`, 'i');

/**
 * Whether a message talks about reminders or names a time ("check the order status in two hours"): worth asking a
 * language model when the parser read nothing. Other messages cost no extra model call.
 */
export const mentionsScheduling = (message: string) => CREATE_CUE.test(message) || LIST.test(message) || CANCEL.test(message) || TIME_TALK.test(message);
