import ms, { type StringValue } from 'ms';

/**
 * Milliseconds of an interval such as `"200 milliseconds"`, `"2 seconds"`,
 * `"1.5h"` or a bare number of milliseconds (the `ms` package's syntax);
 * `undefined` when `text` is not one (a cron expression, a date...).
 *
 * Agenda's own parsers get milliseconds wrong: human-interval reads
 * `"200 milliseconds"` as 200 *seconds*, and date.js puts
 * `"in 500 milliseconds"` 20 minutes ahead. So the host reads intervals and
 * hands Agenda numbers and dates.
 */
export function parseInterval(text: string): number | undefined {
  const value = text.trim();
  return value === '' ? undefined : ms(value as StringValue);
}

/** `when` for Agenda: `"in <interval>"` becomes a Date; other text (`"tomorrow at noon"`) and Dates pass through. */
export function resolveWhen(when: Date | string, now = Date.now()): Date | string {
  if (typeof when !== 'string') return when;
  const match = /^\s*in\s+(.+)$/i.exec(when);
  const delay = match ? parseInterval(match[1]!) : undefined;
  return delay === undefined ? when : new Date(now + delay);
}
