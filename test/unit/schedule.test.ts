// Schedules of scheduled tasks (core/src/scheduled-tasks/schedule.ts): what is accepted, its canonical form, and the
// next due time, which collapses every due time missed into one.
import t from 'tap';
import { ValidationError } from '@agent-host/sdk';
import { canonicalTimeZone, nextRunAfter, normalizeSchedule, type ScheduleInput } from '../../core/src/scheduled-tasks/schedule.js';

const NOW = new Date('2026-03-20T10:00:00.000Z');
const LIMITS = { min_interval_seconds: 60, max_horizon_days: 30 };
const normalize = (input: ScheduleInput) => normalizeSchedule(input, NOW, LIMITS, ['body', 'schedule_payload']);
const refusal = (input: ScheduleInput) => {
  try {
    normalize(input);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues.map((issue) => `${issue.loc.join('.')}: ${issue.type}`);
    throw error;
  }
  return [];
};

t.test('each kind in its canonical form, with its first due time', async (t) => {
  t.same(normalize({ kind: 'once', run_at: '2026-03-20T12:30:00+01:00', time_zone: 'europe/paris' }), {
    schedule: { kind: 'once', run_at: '2026-03-20T11:30:00.000Z', time_zone: 'Europe/Paris' },
    firstRunAt: new Date('2026-03-20T11:30:00.000Z'),
  });
  t.same(
    normalize({ kind: 'interval', every: '2 hours' }),
    {
      schedule: { kind: 'interval', every_seconds: 7200, start_at: '2026-03-20T12:00:00.000Z' },
      firstRunAt: new Date('2026-03-20T12:00:00.000Z'),
    },
    'an interval without start_at first runs one interval from now',
  );
  t.same(
    normalize({ kind: 'cron', expression: '0 9 * * MON-FRI', time_zone: 'Europe/Berlin' }),
    {
      schedule: { kind: 'cron', expression: '0 9 * * 1-5', time_zone: 'Europe/Berlin' },
      firstRunAt: new Date('2026-03-23T08:00:00.000Z'),
    },
    'Friday 10:00 UTC is past 9:00 in Berlin: next Monday 9:00 CET',
  );
  t.same(normalize({ kind: 'cron', expression: '15 6 1 * *' }).schedule, { kind: 'cron', expression: '15 6 1 * *', time_zone: 'UTC' }, 'UTC by default');
  t.equal(canonicalTimeZone('Asia/Kolkata'), 'Asia/Kolkata', 'a link stays as written');
  t.equal(canonicalTimeZone('america/new_york'), 'America/New_York', 'the case is corrected');
  t.equal(canonicalTimeZone('Nowhere/Special'), undefined);
});

t.test('refusals name the field and say why', async (t) => {
  t.same(refusal({ kind: 'once', run_at: '2026-03-20T09:59:59Z' }), ['body.schedule_payload.run_at: in_the_past']);
  t.same(refusal({ kind: 'once', run_at: '2026-05-20T10:00:00Z' }), ['body.schedule_payload.run_at: too_far']);
  t.same(refusal({ kind: 'once', run_at: '2026-03-21T10:00:00Z', time_zone: 'Mars/Base' }), ['body.schedule_payload.time_zone: unknown_time_zone']);
  t.same(refusal({ kind: 'interval', every_seconds: 59 }), ['body.schedule_payload.every_seconds: too_short']);
  t.same(refusal({ kind: 'interval', every: '30 seconds' }), ['body.schedule_payload.every: too_short']);
  t.same(refusal({ kind: 'interval', every_seconds: 60, every: '1 minute' }), ['body.schedule_payload.every_seconds: missing'], 'not both');
  t.same(refusal({ kind: 'interval' }), ['body.schedule_payload.every_seconds: missing'], 'not neither');
  t.same(refusal({ kind: 'interval', every: 'soon' }), ['body.schedule_payload.every: value_error']);
  t.same(refusal({ kind: 'interval', every: '99999999999 years' }), ['body.schedule_payload.every: value_error'], 'no interval past what a date can hold');
  t.same(refusal({ kind: 'interval', every_seconds: 60, start_at: '2026-03-20T09:00:00Z' }), ['body.schedule_payload.start_at: in_the_past']);
  t.same(refusal({ kind: 'cron', expression: '0 9 * *' }), ['body.schedule_payload.expression: invalid_cron'], 'four fields');
  t.same(refusal({ kind: 'cron', expression: '0 0 9 * * *' }), ['body.schedule_payload.expression: invalid_cron'], 'six fields (seconds)');
  t.same(refusal({ kind: 'cron', expression: '0 25 * * *' }), ['body.schedule_payload.expression: invalid_cron'], 'hour 25');
  t.same(refusal({ kind: 'cron', expression: '0 9 30 2 *' }), ['body.schedule_payload.expression: invalid_cron'], 'February 30th never comes');
  t.same(refusal({ kind: 'cron', expression: '* * * * *', time_zone: 'UTC' }), [], 'every minute is the minimum, allowed');
});

t.test('a cron expression is held to the minimum by its shortest gap, not its first one', async (t) => {
  const tight = { ...LIMITS, min_interval_seconds: 600 };
  const refuse = (expression: string) => {
    try {
      normalizeSchedule({ kind: 'cron', expression }, NOW, tight, ['x']);
      return undefined;
    } catch (error) {
      return (error as ValidationError).issues[0]!.type;
    }
  };
  t.equal(refuse('*/5 * * * *'), 'too_short', 'every 5 minutes is under 10');
  t.equal(refuse('0,5 * * * *'), 'too_short', ':00 and :05 are 5 minutes apart, although :05 to the next :00 is 55');
  t.equal(refuse('0,30 * * * *'), undefined, 'every 30 minutes is allowed');
});

t.test('the next due time: one after now, however many were missed, in the rhythm of the schedule', async (t) => {
  const interval = { kind: 'interval' as const, every_seconds: 60, start_at: '2026-03-20T10:00:00.000Z' };
  t.same(nextRunAfter(interval, new Date('2026-03-20T10:03:05Z')), new Date('2026-03-20T10:04:00Z'), 'three missed due times give one, on the minute');
  t.same(nextRunAfter(interval, new Date('2026-03-20T10:02:00Z')), new Date('2026-03-20T10:03:00Z'), 'strictly after a due time that is now');
  t.same(nextRunAfter(interval, new Date('2026-03-20T09:00:00Z')), new Date('2026-03-20T10:00:00Z'), 'before the start: the start');
  t.equal(nextRunAfter({ kind: 'once', run_at: '2026-03-20T10:00:00.000Z', time_zone: null }, NOW), null, 'a one-off task has no next run');

  const daily = { kind: 'cron' as const, expression: '0 9 * * *', time_zone: 'Europe/Berlin' };
  t.same(nextRunAfter(daily, new Date('2026-03-28T08:00:00Z')), new Date('2026-03-29T07:00:00Z'), 'at 9:00 CET the next is 9:00 CEST, after the clocks moved');
  t.same(nextRunAfter(daily, new Date('2026-03-25T20:00:00Z')), new Date('2026-03-26T08:00:00Z'), 'days missed give the next one');
  t.same(nextRunAfter(daily, new Date('2026-03-26T08:00:00Z')), new Date('2026-03-27T08:00:00Z'), 'strictly after an occurrence that is now');
});
