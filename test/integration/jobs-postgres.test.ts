// Background jobs on the default job store (Agenda on the core Postgres
// database): a job a plugin defines through the SDK runs exactly once across
// host instances, its name is namespaced with the plugin id, and a failing job
// is recorded as failed without taking the host down.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { getJson, startTestHost } from '../helpers/host.js';
import { jobCounterEnv, readLedger, runCountsBySeq, sleep, waitFor } from '../helpers/job-counter.js';
import { createTestDatabase, query } from '../helpers/services.js';

const N = 24;
const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-jobs-pg-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const ledger = path.join(dir, 'ledger.jsonl');
const run = `pg-${randomBytes(4).toString('hex')}`;
const databaseUrl = await createTestDatabase(t);
// A short lock lifetime: Agenda leaves a lockLifetime/2 timer pending after each
// run, which would keep this test process alive for minutes with the default.
const common = { ledger_file: ledger, run, delay_ms: 25, lock_lifetime_ms: 4_000 };

// Host b only works; host a starts second and, from its start hook, waits until
// both job processors are running, then queues one failing job and a burst of
// N `count` jobs, which both hosts (notified and polling) race to lock.
const hostB = await startTestHost(t, { databaseUrl, env: jobCounterEnv({ ...common, worker: 'b' }) });
const hostA = await startTestHost(t, {
  databaseUrl,
  env: jobCounterEnv({ ...common, worker: 'a', queue_count: N, queue_delay_ms: 500, queue_failing: true }),
});

t.test('a plugin-defined job runs exactly once when two hosts share one Postgres database', async (t) => {
  await waitFor(
    `${N} runs of job-counter:count in ${ledger}`,
    () => readLedger(ledger),
    (entries) => entries.filter((e) => e.event === 'run' && e.run === run).length >= N,
    20_000,
  );
  await sleep(2_000); // ten poll intervals (process_every = 200 ms in config/test.toml) for a late duplicate to show up
  const entries = await readLedger(ledger);
  const queued = entries.filter((e) => e.event === 'queued' && e.name === 'count');
  const runs = entries.filter((e) => e.event === 'run' && e.run === run);

  t.same(
    entries.filter((e) => e.event === 'queue-error'),
    [],
    'queueing through JobScheduler.now raised no error',
  );
  t.equal(queued.length, N, 'the start hook of host a queued N distinct jobs');
  t.equal(new Set(queued.map((e) => e.job_id)).size, N, 'JobScheduler.now returned a distinct job id per queued job');
  t.same(
    runCountsBySeq(entries, run, N),
    Array.from({ length: N }, () => 1),
    'each queued job ran exactly once (no job ran twice, none was lost)',
  );
  t.equal(runs.length, N, 'both hosts together ran N jobs, no more');
  t.same(new Set(runs.map((e) => e.job_id)), new Set(queued.map((e) => e.job_id)), 'each run reports the id of a job that was queued (JobRun.id)');
  t.ok(
    runs.every((e) => e.worker === 'a' || e.worker === 'b'),
    'every run happened on one of the two hosts',
  );
  t.ok(
    runs.every((e) => e.name === 'count'),
    'a handler sees its job name without the plugin prefix (JobRun.name)',
  );
  const byWorker = { a: runs.filter((e) => e.worker === 'a').length, b: runs.filter((e) => e.worker === 'b').length };
  t.comment(`runs per host: a=${byWorker.a} b=${byWorker.b}`);
  const twice = runCountsBySeq(entries, run, N).flatMap((count, seq) =>
    count > 1
      ? [
          `seq ${seq} on ${runs
            .filter((e) => e.seq === seq)
            .map((e) => e.worker)
            .join('+')}`,
        ]
      : [],
  );
  if (twice.length) t.comment(`jobs that ran more than once: ${twice.join(', ')}`);
  t.ok(byWorker.a > 0 && byWorker.b > 0, 'both hosts ran jobs, so they really competed for them');

  const [row] = await query<{ total: string; finished: string }>(
    databaseUrl,
    `SELECT count(*) AS total, count(last_finished_at) AS finished FROM agenda_jobs WHERE name = 'job-counter:count'`,
  );
  t.same({ total: Number(row!.total), finished: Number(row!.finished) }, { total: N, finished: N }, 'the job store holds N count jobs, each finished');
});

t.test('job names are namespaced <pluginId>:<name> in agenda_jobs', async (t) => {
  const rows = await query<{ name: string }>(databaseUrl, 'SELECT DISTINCT name FROM agenda_jobs ORDER BY name');
  const names = rows.map((r) => r.name);
  // Core's own jobs (the knowledge supervisor) are stored beside them under their domain's prefix.
  t.same(
    names.filter((n) => n.startsWith('job-counter:')),
    ['job-counter:count', 'job-counter:fail'],
    'the plugin jobs are stored under the plugin id prefix',
  );
  t.ok(
    names.every((n) => n.includes(':')),
    'every stored job name has an owner prefix',
  );
  t.notOk(names.includes('count') || names.includes('fail'), 'no job is stored under its bare, unprefixed name');
});

t.test('a failing job is recorded as failed without crashing the host', async (t) => {
  const failed = await waitFor(
    'job-counter:fail to be recorded as failed',
    () =>
      query<{ fail_reason: string | null; fail_count: number | null; failed_at: Date | null; locked_at: Date | null }>(
        databaseUrl,
        `SELECT fail_reason, fail_count, failed_at, locked_at FROM agenda_jobs WHERE name = 'job-counter:fail'`,
      ),
    (rows) => rows.length === 1 && rows[0]!.failed_at !== null,
    20_000,
  );
  const row = failed[0]!;
  t.equal(row.fail_reason, `job-counter deliberate failure (${run})`, 'fail_reason holds the message the handler threw');
  t.equal(row.fail_count, 1, 'fail_count counts the one failed run');
  t.equal(row.locked_at, null, 'the failed job does not stay locked');
  await sleep(1_000);
  const attempts = (await readLedger(ledger)).filter((e) => e.event === 'fail-attempt' && e.run === run);
  t.equal(attempts.length, 1, 'the failing job ran once (no retry is configured) on one host');
  for (const [label, host] of [
    ['a', hostA],
    ['b', hostB],
  ] as const) {
    const health = await getJson(host, '/healthz');
    t.equal(health.status, 200, `host ${label} still serves /healthz after the job failure`);
    t.notOk(
      (health.body.guard_messages as string[]).some((m) => m.includes('job_store')),
      `host ${label} reports its job store healthy after the job failure`,
    );
  }
});

t.test('a stopping host hands the jobs it locked but did not start to the other hosts', async (t) => {
  const ledger = path.join(dir, 'handoff.jsonl');
  const run = `handoff-${randomBytes(4).toString('hex')}`;
  const databaseUrl = await createTestDatabase(t);
  // Locks last 12 s, so only a release at shutdown lets host b run the jobs within the 6 s waited below.
  const common = { ledger_file: ledger, run, delay_ms: 800, lock_lifetime_ms: 12_000 };
  const hostA = await startTestHost(t, { databaseUrl, env: jobCounterEnv({ ...common, worker: 'a', concurrency: 1, queue_count: 4 }) });
  await waitFor(
    'host a to lock all 4 jobs and start one (it runs one at a time)',
    () =>
      query<{ locked: string; started: string }>(
        databaseUrl,
        `SELECT count(locked_at) AS locked, count(last_run_at) AS started FROM agenda_jobs WHERE name = 'job-counter:count'`,
      ),
    (rows) => Number(rows[0]!.locked) === 4 && Number(rows[0]!.started) === 1,
    10_000,
  );
  await hostA.stop();
  const afterStop = await readLedger(ledger);
  t.same(
    afterStop.filter((e) => e.event === 'run').map((e) => e.worker),
    ['a'],
    'host a finished the one job it had started before it stopped',
  );
  const [{ locked }] = (await query<{ locked: string }>(
    databaseUrl,
    `SELECT count(locked_at) AS locked FROM agenda_jobs WHERE name = 'job-counter:count'`,
  )) as [{ locked: string }];
  t.equal(Number(locked), 0, 'a stopped host leaves no job locked');

  await startTestHost(t, { databaseUrl, env: jobCounterEnv({ ...common, worker: 'b' }) });
  const entries = await waitFor(
    'host b to run the 3 jobs host a had locked',
    () => readLedger(ledger),
    (e) => e.filter((x) => x.event === 'run').length >= 4,
    6_000,
  );
  t.same(runCountsBySeq(entries, run, 4), [1, 1, 1, 1], 'each of the 4 jobs ran exactly once across the hand-off');
  t.same(
    entries.filter((e) => e.event === 'run' && e.worker === 'b').length,
    3,
    'host b ran the 3 jobs host a had locked but not started, well before their locks would expire',
  );
});
