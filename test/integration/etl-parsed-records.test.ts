// An ETL job's parsed records (core/src/etl/parsed-records.ts): the conversion reads the records the check at upload
// accepted, not the CSV again; a job without them (stored by an older host) parses its CSV; an ended job's are removed.
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { eventually } from '../helpers/eventually.js';
import { AdminClient, startTestHost } from '../helpers/host.js';

const SOURCE = 'Full Name,E-mail\nAda Lovelace,ada@example.com\n"Hopper, Grace",grace@example.com\n';
const OUTPUT = 'name,email\nAda Lovelace,ada@example.com\n"Hopper, Grace",grace@example.com\n';

t.test('a job converts the records its check accepted, parses its CSV without them, and removes them once it ends', async (t) => {
  const objects = await mkdtemp(path.join(os.tmpdir(), 'agent-host-etl-records-'));
  t.teardown(() => rm(objects, { recursive: true, force: true }));
  const env = { AGENT_HOST__OBJECT_STORE__LOCAL_DIR: JSON.stringify(objects) };
  // This instance takes jobs but runs none, so they wait for the test to change their stored files.
  const taking = await startTestHost(t, { env: { ...env, AGENT_HOST__ETL__ENABLED: 'false' } });
  const admin = new AdminClient(taking.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Importer', agent_type: 'etl' })).body;
  const base = `/agents/${agent.agent_id}/etl-jobs`;
  const make = async () => {
    const form = new FormData();
    form.append('source_csv', new Blob([SOURCE], { type: 'text/csv' }), 'people.csv');
    form.append('target_schema_csv', new Blob(['name,type,required\nname,string,yes\nemail,string,yes\n'], { type: 'text/csv' }), 'schema.csv');
    const made = await admin.request('POST', base, form);
    t.equal(made.status, 201);
    return made.body.job_id as string;
  };
  const checked = await make();
  const older = await make();
  const folder = (job: string) => path.join(objects, 'etl', agent.agent_id, job);
  const records = (job: string) => path.join(folder(job), 'parsed-records');
  t.ok(existsSync(records(checked)) && existsSync(records(older)), 'each waiting job has its parsed records');

  // One job's stored CSV changes behind the host's back; the other loses its parsed records, as a job stored before
  // they were kept has none.
  const [sourceName] = await readdir(path.join(folder(checked), 'source'));
  await writeFile(path.join(folder(checked), 'source', sourceName!), 'Full Name,E-mail\nMallory,mallory@example.com\n');
  await rm(records(older));

  const running = await startTestHost(t, { databaseUrl: taking.databaseUrl, env });
  const worker = new AdminClient(running.url);
  await worker.login();
  for (const [job, what] of [
    [checked, 'the records the check accepted, not the CSV as it is now'],
    [older, 'its CSV, parsed'],
  ] as const) {
    const done = await eventually(
      async () => {
        const read = (await worker.request('GET', `${base}/${job}`)).body;
        return read.status === 'succeeded' || read.status === 'failed' ? read : undefined;
      },
      `job ${job}`,
      30_000,
    );
    t.match(done, { status: 'succeeded', rows_done: 2, report: { rows_written: 2 } });
    t.equal((await worker.request('GET', `${base}/${job}/download`)).body, OUTPUT, `converted from ${what}`);
    t.notOk(existsSync(records(job)), 'no parsed records are left once the job has ended');
  }
});
