// A fault of the ETL worker: the host converting a job is killed with SIGKILL part of the way through. Another
// instance (same database, same object store) recovers the job after its lease lapses, converts it again with the
// stored plan, and ends it once, with every row in the output exactly once.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startHostProcess } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';

const ROWS = 200_000;

t.test('a host killed mid-job: another instance recovers the ETL job and writes its output once', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const objects = await mkdtemp(path.join(os.tmpdir(), 'agent-host-etl-objects-'));
  t.teardown(() => rm(objects, { recursive: true, force: true }));
  const env = { AGENT_HOST__OBJECT_STORE__LOCAL_DIR: JSON.stringify(objects), AGENT_HOST__ETL__PROGRESS_EVERY_ROWS: '2000' };
  const doomed = await startHostProcess(t, databaseUrl, env, 'doomed');
  const admin = new AdminClient(doomed.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Crash ETL', agent_type: 'etl' })).body;
  const lines = Array.from({ length: ROWS }, (_, i) => `Person ${i},p${i}@example.com,${String((i % 28) + 1).padStart(2, '0')}/03/2026`);
  const form = new FormData();
  form.append('source_csv', new Blob([`Full Name,E-mail,Signup (dd/mm/yyyy)\n${lines.join('\n')}\n`], { type: 'text/csv' }), 'people.csv');
  form.append('target_schema_csv', new Blob(['name,type,required\nname,string,yes\nemail,string,yes\nsignup_date,date,no\n'], { type: 'text/csv' }), 's.csv');
  const job = (await admin.request('POST', `/agents/${agent.agent_id}/etl-jobs`, form)).body;
  t.match(job, { status: 'running', rows_total: ROWS }, 'claimed at once by the instance that made it');
  const progress = async () => (await query<{ rows_done: number }>(databaseUrl, 'SELECT rows_done FROM etl_jobs WHERE id = $1', [job.job_id]))[0]!.rows_done;
  await eventually(async () => ((await progress()) > 0 ? true : undefined), 'the doomed instance converting', 30_000, 5);
  doomed.run.child.kill('SIGKILL');
  await doomed.run.exit;
  const killedAt = await progress();
  t.ok(killedAt < ROWS, `killed with SIGKILL at ${killedAt} of ${ROWS} rows`);

  const survivor = new AdminClient((await startHostProcess(t, databaseUrl, env, 'survivor')).url);
  await survivor.login();
  // job_lease_seconds = 5 and supervisor_interval_seconds = 1 in config/test.toml.
  const done = await eventually(
    async () => {
      const read = (await survivor.request('GET', `/agents/${agent.agent_id}/etl-jobs/${job.job_id}`)).body;
      return read.status === 'succeeded' || read.status === 'failed' ? read : undefined;
    },
    'the job, recovered and finished',
    90_000,
    500,
  );
  t.match(done, {
    status: 'succeeded',
    attempt_count: 2,
    rows_done: ROWS,
    report: { rows_written: ROWS, rows_rejected: 0 },
    plan: { planned_by: 'deterministic' },
  });
  const output = (await survivor.request('GET', `/agents/${agent.agent_id}/etl-jobs/${job.job_id}/download`)).body as string;
  const written = output.trimEnd().split('\n');
  t.equal(written.length, ROWS + 1, 'every row once, after the header');
  t.equal(written[1], 'Person 0,p0@example.com,2026-03-01');
  t.equal(written.at(-1), `Person ${ROWS - 1},p${ROWS - 1}@example.com,2026-03-${String(((ROWS - 1) % 28) + 1).padStart(2, '0')}`);
  const [row] = await query<{ output_object_key: string }>(databaseUrl, 'SELECT output_object_key FROM etl_jobs WHERE id = $1', [job.job_id]);
  t.match(row!.output_object_key, /\/output-2\.csv$/, "the second attempt's output is the job's");
});
