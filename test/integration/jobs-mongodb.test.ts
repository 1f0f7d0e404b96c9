// Background jobs on the MongoDB job store (`[jobs] backend = "mongodb"`),
// served here by FerretDB v1.24 over SQLite, the only MongoDB-compatible
// server this project can obtain. The core database stays on Postgres.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';
import t from 'tap';
import { startFerretDb } from '../helpers/ferretdb.js';
import { startTestHost } from '../helpers/host.js';
import { jobCounterEnv, readLedger, runCountsBySeq, sleep, waitFor } from '../helpers/job-counter.js';
import { createTestDatabase } from '../helpers/services.js';

const N = 24;

// FerretDB's findAndModify is not atomic (its SQLite and PostgreSQL handlers
// read, then write the whole document back outside one transaction), so even
// one Agenda worker, whose lock queries overlap, can lock a job twice. Agenda's
// exactly-once rests on an atomic findOneAndUpdate, which a real MongoDB gives
// and FerretDB does not; exactly-once across instances is therefore shown on
// the Postgres backend (jobs-postgres.test.ts). Here the MongoDB backend is
// shown to store, run, finish and fail jobs, losing none.
t.test('plugin-defined jobs run to completion on the MongoDB job store, none lost', async (t) => {
  const ferret = await startFerretDb(t);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-jobs-mongo-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const ledger = path.join(dir, 'ledger.jsonl');
  const run = `mongo-${randomBytes(4).toString('hex')}`;
  const mongoUrl = ferret.url(`jobs_${randomBytes(4).toString('hex')}`);
  // Short locks, as Agenda leaves a lockLifetime/2 timer pending after each run, but not 4 s: on a loaded machine
  // FerretDB's writes were slow enough that Agenda cancelled every count job as outliving its lock.
  // Idle workers poll every second, not every 200 ms as in config/test.toml: each poll of each of the host's job
  // names is a findAndModify, which FerretDB runs as an SQLite write transaction, and with the suite's other files
  // loading the machine their overlap failed FerretDB's writes with SQLITE_BUSY until jobs never ran.
  const host = await startTestHost(t, {
    env: {
      AGENT_HOST_JOBS_BACKEND: 'mongodb',
      MONGODB_URL: mongoUrl,
      AGENT_HOST__JOBS__PROCESS_EVERY: JSON.stringify('1 second'),
      ...jobCounterEnv({
        ledger_file: ledger,
        run,
        delay_ms: 25,
        lock_lifetime_ms: 12_000,
        worker: 'a',
        queue_count: N,
        queue_delay_ms: 200,
        queue_failing: true,
      }),
    },
  });
  t.equal(host.app.config.jobs.backend, 'mongodb', 'the host uses the MongoDB job store');
  t.equal(host.app.config.jobs.process_every, '1 second', 'its idle workers poll every second');

  // Every one of the N jobs, not N runs: a job FerretDB let lock twice runs twice and must not stand in for one not run yet.
  await waitFor(
    `each of the ${N} job-counter:count jobs run in ${ledger}`,
    () => readLedger(ledger),
    (entries) => runCountsBySeq(entries, run, N).every((n) => n >= 1),
    // A job FerretDB locked twice waits out its 12 s lock before Agenda picks it up again, and on a loaded machine
    // (two CI-style runs of mine failed at 20 s) that can happen more than once: the bound tells lost from slow.
    90_000,
  ).catch(async (error: Error) => {
    // Name the jobs that never ran and what the ledger saw of each, rather than the ledger's first lines.
    const entries = await readLedger(ledger);
    const missing = runCountsBySeq(entries, run, N).flatMap((n, seq) => (n ? [] : [seq]));
    const seen = missing.map(
      (seq) =>
        `${seq}: ${
          entries
            .filter((e) => e.run === run && e.seq === seq)
            .map((e) => e.event)
            .join(', ') || 'nothing'
        }`,
    );
    throw new Error(`${error.message.split('; last value')[0]}; never ran: ${seen.join(' | ')}`);
  });
  await sleep(1_000);
  const entries = await readLedger(ledger);
  const counts = runCountsBySeq(entries, run, N);
  const duplicated = counts.filter((n) => n > 1).length;
  if (duplicated) t.comment(`FerretDB let ${duplicated} of ${N} jobs be locked twice (non-atomic findAndModify)`);
  t.same(
    entries.filter((e) => e.event === 'queue-error'),
    [],
    'queueing through JobScheduler.now raised no error',
  );
  t.equal(entries.filter((e) => e.event === 'queued' && e.name === 'count').length, N, 'the start hook queued N distinct jobs');
  t.ok(
    counts.every((n) => n >= 1),
    'every queued job ran (none lost)',
  );

  const client = await MongoClient.connect(mongoUrl);
  try {
    const docs = await client.db().collection('agendaJobs').find({}).toArray();
    // Core's own jobs (the knowledge supervisor) are stored beside them under their domain's prefix.
    const names = [...new Set(docs.map((d) => d.name))].sort();
    t.same(
      names.filter((n) => n.startsWith('job-counter:')),
      ['job-counter:count', 'job-counter:fail'],
      'jobs are stored under <pluginId>:<name> in agendaJobs',
    );
    t.ok(
      names.every((n) => n.includes(':')),
      'every stored job name has an owner prefix',
    );
    // The ledger's `run` line is written as a run starts; Agenda records lastFinishedAt after it, and a run FerretDB
    // let lock twice may still be repeating (its first finish overwritten by the second lock's whole-document write).
    const finished = await waitFor(
      `lastFinishedAt on each of the ${N} job-counter:count jobs`,
      async () =>
        (await client.db().collection('agendaJobs').find({ name: 'job-counter:count' }).toArray()).map((d) => ({
          seq: d.data?.seq,
          lockedAt: d.lockedAt ?? null,
          lastFinishedAt: d.lastFinishedAt ?? null,
        })),
      (jobs) => jobs.length === N && jobs.every((j) => j.lastFinishedAt),
      30_000,
    ).catch((error: Error) => {
      t.fail(error.message);
      return [];
    });
    t.equal(finished.filter((j) => j.lastFinishedAt).length, N, 'every count job is recorded as finished');
    const failed = docs.find((d) => d.name === 'job-counter:fail');
    t.ok(failed?.failReason && failed.failCount >= 1, 'a failing job is recorded as failed with its reason');
  } finally {
    await client.close();
  }
  const health = await (await fetch(`${host.url}/healthz`)).json();
  t.equal(health.guard_state, 'ok', 'the host stays healthy after a failing job');
});

t.test('an unreachable MongoDB job store refuses start-up with its error instead of crashing or hanging', async (t) => {
  const closed = await new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
  const databaseUrl = await createTestDatabase(t);
  const started = Date.now();
  await t.rejects(
    startTestHost(t, {
      databaseUrl,
      env: { AGENT_HOST_JOBS_BACKEND: 'mongodb', MONGODB_URL: `mongodb://127.0.0.1:${closed}/jobs?serverSelectionTimeoutMS=1000` },
    }),
    /ECONNREFUSED|Server selection timed out|connect/i,
    'start-up rejects with the connection error of the job store',
  );
  t.ok(Date.now() - started < 15_000, 'the refusal comes within the driver timeout, not never');
});
