// Job intervals are read by the host, not by Agenda's parsers: human-interval
// reads "200 milliseconds" as 200 seconds (and turns text it cannot read into
// 5 s silently), date.js puts "in 500 milliseconds" about 20 minutes ahead.
import t from 'tap';
import { parseProcessEvery } from '../../core/src/jobs/create-agenda.js';
import { parseInterval, resolveWhen } from '../../core/src/jobs/interval.js';

t.test('[jobs] process_every is read in milliseconds', async (t) => {
  t.equal(parseProcessEvery('200 milliseconds'), 200, '"200 milliseconds" (config/test.toml) is 200 ms, not 200 s');
  t.equal(parseProcessEvery('200ms'), 200, 'the ms abbreviation is understood');
  t.equal(parseProcessEvery('2 seconds'), 2_000, '"2 seconds" (default.toml) is 2000 ms');
  t.equal(parseProcessEvery('0.5 seconds'), 500, 'fractions are allowed');
  t.equal(parseProcessEvery(' 1.5 Minutes '), 90_000, 'case and surrounding spaces are ignored');
  t.equal(parseProcessEvery('750'), 750, 'a bare number is milliseconds');
});

t.test('an unreadable process_every refuses start-up instead of defaulting silently', async (t) => {
  for (const bad of ['', 'soon', 'two seconds', '5 fortnights', '0 seconds', '-1 seconds', 'seconds']) {
    t.throws(() => parseProcessEvery(bad), /process_every = ".*" is not an interval/, `"${bad}" is refused with the key named`);
  }
});

t.test('JobScheduler.every and .schedule intervals reach Agenda as milliseconds and dates', async (t) => {
  t.equal(parseInterval('500 milliseconds'), 500, 'every("500 milliseconds") repeats every 500 ms, not 500 s');
  t.equal(parseInterval('5 minutes'), 300_000, 'every("5 minutes") repeats every 5 minutes');
  t.equal(parseInterval('*/5 * * * *'), undefined, 'a cron expression is not taken for an interval (Agenda parses it)');
  t.equal(parseInterval('0 0,12 * * *'), undefined, 'a cron expression with a comma list is not taken for an interval');
  const now = Date.UTC(2026, 0, 1);
  t.same(resolveWhen('in 500 milliseconds', now), new Date(now + 500), 'schedule("in 500 milliseconds") runs 500 ms from now');
  t.same(resolveWhen('in 2 hours', now), new Date(now + 7_200_000), 'schedule("in 2 hours") runs two hours from now');
  t.equal(resolveWhen('tomorrow at noon', now), 'tomorrow at noon', 'other text is left to Agenda');
  const date = new Date(now + 1);
  t.equal(resolveWhen(date, now), date, 'a Date passes through');
});
