// A fault of the fault suite (issue 17): a host process killed with SIGKILL while it runs a plugin's job. The job's
// lock in the job store lapses with the dead process, another instance runs it, and it completes exactly once: not
// lost with the dead host, not run twice to its end.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startHostProcess } from '../helpers/cli.js';
import { jobCounterEnv, readLedger, runCountsBySeq, waitFor } from '../helpers/job-counter.js';
import { createTestDatabase, query } from '../helpers/services.js';

t.test('a job whose host is killed mid-run is run by another instance once its lock lapses, and completes once', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-job-crash-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const ledger = path.join(dir, 'ledger.jsonl');
  const databaseUrl = await createTestDatabase(t);
  // The run takes 3 s; the lock lasts 6 s, so no live run loses its lock, and a dead one's lapses soon.
  const common = { ledger_file: ledger, run: 'crash', delay_ms: 3_000, lock_lifetime_ms: 6_000 };
  const doomed = await startHostProcess(t, databaseUrl, jobCounterEnv({ ...common, worker: 'doomed', queue_count: 1 }), 'doomed');
  await waitFor(
    'the doomed host to start the job',
    () => readLedger(ledger),
    (e) => e.some((x) => x.event === 'start'),
    20_000,
  );
  doomed.run.child.kill('SIGKILL');
  await doomed.run.exit;
  const [locked] = await query<{ locked_at: Date | null }>(databaseUrl, `SELECT locked_at FROM agenda_jobs WHERE name = 'job-counter:count'`);
  t.ok(locked?.locked_at, 'the dead host left the job locked');
  t.same(
    (await readLedger(ledger)).filter((e) => e.event === 'run'),
    [],
    'and unfinished',
  );

  const killedAt = Date.now();
  await startHostProcess(t, databaseUrl, jobCounterEnv({ ...common, worker: 'survivor' }), 'survivor');
  const entries = await waitFor(
    'the survivor to run the job',
    () => readLedger(ledger),
    (e) => e.some((x) => x.event === 'run'),
    30_000,
  );
  const [run] = entries.filter((e) => e.event === 'run');
  t.equal(run!.worker, 'survivor', 'the other instance ran it');
  t.ok(run!.at - killedAt < 20_000, `once the lock lapsed (${((run!.at - killedAt) / 1000).toFixed(1)} s after the kill)`);
  t.same(
    entries.filter((e) => e.event === 'start').map((e) => e.worker),
    ['doomed', 'survivor'],
    'it was started twice, once by each',
  );
  await new Promise((resolve) => setTimeout(resolve, common.lock_lifetime_ms));
  t.same(runCountsBySeq(await readLedger(ledger), 'crash', 1), [1], 'and completed exactly once, still so a lock lifetime later');
  const [row] = await query<{ locked_at: Date | null; last_finished_at: Date | null }>(
    databaseUrl,
    `SELECT locked_at, last_finished_at FROM agenda_jobs WHERE name = 'job-counter:count'`,
  );
  t.match(row, { locked_at: null, last_finished_at: Date }, 'the job store records it finished and unlocked');
});
