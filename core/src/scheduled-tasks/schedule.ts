import { ValidationError, type ValidationIssue } from '@agent-host/sdk';
import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { parseInterval } from '../jobs/interval.js';

/**
 * A schedule as the API takes it. `once` runs at `run_at`; `interval` every `every_seconds` (or `every`, such as
 * `"2 hours"`) from `start_at` (one interval from now when absent); `cron` a five-field expression in an IANA time
 * zone (UTC when absent).
 */
/** The longest interval taken: ten years, far past any horizon, and well inside what a Date can hold. */
const MAX_INTERVAL_SECONDS = 10 * 366 * 86_400;

export const scheduleInputSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('once'), run_at: z.string().datetime({ offset: true }), time_zone: z.string().min(1).max(64).optional() }).strict(),
  z
    .object({
      kind: z.literal('interval'),
      every_seconds: z.number().int().positive().max(MAX_INTERVAL_SECONDS).optional(),
      every: z.string().min(1).max(64).optional(),
      start_at: z.string().datetime({ offset: true }).optional(),
    })
    .strict(),
  z.object({ kind: z.literal('cron'), expression: z.string().min(1).max(200), time_zone: z.string().min(1).max(64).optional() }).strict(),
]);
export type ScheduleInput = z.output<typeof scheduleInputSchema>;

/**
 * The canonical form stored and returned as `schedule_payload`: times in UTC ISO 8601, an interval in whole seconds
 * with the moment it counts from, a cron expression re-written from its parsed fields (`MON-FRI` becomes `1-5`) with
 * the canonical name of its time zone. `once` keeps the time zone it was given, for showing `run_at` to its user.
 */
export type Schedule =
  | { kind: 'once'; run_at: string; time_zone: string | null }
  | { kind: 'interval'; every_seconds: number; start_at: string }
  | { kind: 'cron'; expression: string; time_zone: string };

export type ScheduleKind = Schedule['kind'];
export const SCHEDULE_KINDS = ['once', 'interval', 'cron'] as const satisfies readonly ScheduleKind[];

export interface ScheduleLimits {
  min_interval_seconds: number;
  max_horizon_days: number;
}

const KNOWN_ZONES = new Map(Intl.supportedValuesOf('timeZone').map((zone) => [zone.toLowerCase(), zone]));

/**
 * The name of an IANA time zone as stored: as given, with its case corrected where the runtime lists the zone
 * (`europe/berlin` is `Europe/Berlin`). Links stay as written (`Asia/Kolkata` is not turned into ICU's
 * `Asia/Calcutta`). Undefined when there is no such zone.
 */
export function canonicalTimeZone(zone: string): string | undefined {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
  } catch {
    return undefined;
  }
  return KNOWN_ZONES.get(zone.toLowerCase()) ?? zone;
}

/** Occurrences looked at to find a cron expression's shortest gap: enough for `* / 5` minutes or weekday patterns. */
const CRON_SAMPLE = 48;

/**
 * Validates a schedule and returns its canonical form with its first due time. Every refusal is a
 * `ValidationError` whose `loc` starts with `loc` (the body field, or the chat stage's own path).
 */
export function normalizeSchedule(input: ScheduleInput, now: Date, limits: ScheduleLimits, loc: (string | number)[]): { schedule: Schedule; firstRunAt: Date } {
  const issue = (field: string, msg: string, type = 'value_error'): ValidationIssue => ({ loc: [...loc, field], msg, type });
  const refuse = (field: string, msg: string, type?: string): never => {
    throw new ValidationError([issue(field, msg, type)]);
  };
  const horizon = new Date(now.getTime() + limits.max_horizon_days * 86_400_000);
  const withinHorizon = (at: Date, field: string) => {
    if (at > horizon) refuse(field, `${at.toISOString()} is more than [scheduled_tasks] max_horizon_days = ${limits.max_horizon_days} days ahead`, 'too_far');
  };
  const zoneOf = (zone: string | undefined, fallback: string | null): string | null => {
    if (zone === undefined) return fallback;
    return canonicalTimeZone(zone) ?? refuse('time_zone', `"${zone}" is not an IANA time zone such as "Europe/Berlin" or "UTC"`, 'unknown_time_zone');
  };

  switch (input.kind) {
    case 'once': {
      const runAt = new Date(input.run_at);
      if (runAt <= now) refuse('run_at', `${runAt.toISOString()} is in the past`, 'in_the_past');
      withinHorizon(runAt, 'run_at');
      return { schedule: { kind: 'once', run_at: runAt.toISOString(), time_zone: zoneOf(input.time_zone, null) }, firstRunAt: runAt };
    }
    case 'interval': {
      if ((input.every_seconds === undefined) === (input.every === undefined))
        refuse('every_seconds', 'give exactly one of every_seconds and every', 'missing');
      const seconds = input.every_seconds ?? Math.round((parseInterval(input.every!) ?? NaN) / 1000);
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_INTERVAL_SECONDS) {
        refuse('every', `"${input.every}" is not an interval such as "2 hours" or "90 minutes" (at most ten years)`);
      }
      if (seconds < limits.min_interval_seconds) {
        refuse(
          input.every_seconds !== undefined ? 'every_seconds' : 'every',
          `every ${seconds} s is shorter than [scheduled_tasks] min_interval_seconds = ${limits.min_interval_seconds}`,
          'too_short',
        );
      }
      const startAt = input.start_at ? new Date(input.start_at) : new Date(now.getTime() + seconds * 1000);
      if (startAt.getTime() < now.getTime() - 1000) refuse('start_at', `${startAt.toISOString()} is in the past`, 'in_the_past');
      withinHorizon(startAt, 'start_at');
      return { schedule: { kind: 'interval', every_seconds: seconds, start_at: startAt.toISOString() }, firstRunAt: startAt };
    }
    case 'cron': {
      const timeZone = zoneOf(input.time_zone, 'UTC')!;
      if (input.expression.trim().split(/\s+/).length !== 5) {
        refuse('expression', `"${input.expression}" is not a five-field cron expression (minute hour day-of-month month day-of-week)`, 'invalid_cron');
      }
      let occurrences: Date[] = [];
      let expression = '';
      try {
        const parsed = CronExpressionParser.parse(input.expression, { tz: timeZone, currentDate: now });
        expression = parsed.stringify();
        occurrences = parsed.take(CRON_SAMPLE).map((d) => d.toDate());
      } catch (error) {
        refuse('expression', `"${input.expression}" is not a valid cron expression: ${(error as Error).message}`, 'invalid_cron');
      }
      if (occurrences.length === 0) refuse('expression', `"${input.expression}" never occurs`, 'invalid_cron');
      const gaps = occurrences.slice(1).map((at, i) => (at.getTime() - occurrences[i]!.getTime()) / 1000);
      const shortest = Math.min(...gaps);
      if (shortest < limits.min_interval_seconds) {
        refuse(
          'expression',
          `"${input.expression}" runs every ${shortest} s, shorter than [scheduled_tasks] min_interval_seconds = ${limits.min_interval_seconds}`,
          'too_short',
        );
      }
      withinHorizon(occurrences[0]!, 'expression');
      return { schedule: { kind: 'cron', expression, time_zone: timeZone }, firstRunAt: occurrences[0]! };
    }
  }
}

/**
 * The schedule's next due time after `now`: one, however many due times passed while nobody ran them (a host that
 * was down runs a missed schedule once, then keeps its rhythm). `null` when the schedule has no more runs.
 */
export function nextRunAfter(schedule: Schedule, now: Date): Date | null {
  switch (schedule.kind) {
    case 'once':
      return null;
    case 'interval': {
      const start = new Date(schedule.start_at).getTime();
      const every = schedule.every_seconds * 1000;
      const steps = Math.max(0, Math.floor((now.getTime() - start) / every) + 1);
      return new Date(start + steps * every);
    }
    case 'cron':
      return CronExpressionParser.parse(schedule.expression, { tz: schedule.time_zone, currentDate: now }).next().toDate();
  }
}
