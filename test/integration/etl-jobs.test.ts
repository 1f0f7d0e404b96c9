// ETL jobs (spec 2.9, 4.10, issue 24): a source CSV mapped onto a target schema by etl_mapper on the offline model
// (the deterministic plan), with the report, the downloads, the public alias and its ownership rule, and every refusal
// of a bad file; over the OpenAI wire protocol, a plan the model proposes, one it botches, and the bounded sample.
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { startOpenAiFixture, type FixtureReply } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { query } from '../helpers/services.js';

const SOURCE =
  'Full Name,E-mail,Signup (dd/mm/yyyy),Notes\r\n' +
  'Ada Lovelace,ada@example.com,10/12/2025,first\r\n' +
  '"Hopper, Grace",grace@example.com,25/01/2026,"two\nlines"\r\n' +
  ',nobody@example.com,01/01/2026,no name\r\n' +
  '=HYPERLINK("x"),eve@example.com,31/02/2026,formula\r\n';
const SCHEMA = 'name,type,required,description\nname,string,yes,Full name\nemail,string,yes,\nsignup_date,date,no,When they signed up\n';

const form = (files: { source?: [string, string | Uint8Array, string?]; schema?: [string, string?]; instructions?: string }) => {
  const data = new FormData();
  if (files.source) data.append('source_csv', new Blob([files.source[1]], { type: files.source[2] ?? 'text/csv' }), files.source[0]);
  if (files.schema) data.append('target_schema_csv', new Blob([files.schema[0]], { type: files.schema[1] ?? 'text/csv' }), 'schema.csv');
  if (files.instructions) data.append('instructions', files.instructions);
  return data;
};
const job = (source: string | Uint8Array, schema = SCHEMA) => form({ source: ['customers.csv', source], schema: [schema] });

t.test('offline: the deterministic plan, the output and report, downloads, the public alias, and bad files refused', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST__ETL__MAX_SOURCE_BYTES: '4096' } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Importer', agent_type: 'etl', public_access_mode: 'public_anonymous' })).body;
  const chat = (await admin.request('POST', '/agents', { name: 'Chat', agent_type: 'chat' })).body;
  const base = `/agents/${agent.agent_id}/etl-jobs`;
  t.match(await admin.request('POST', `/agents/${chat.agent_id}/etl-jobs`, job(SOURCE)), { status: 409, body: { code: 'AGENT_NOT_ETL' } });

  const created = await admin.request('POST', base, job(SOURCE));
  t.equal(created.status, 201);
  t.match(created.body, { status: /^(queued|running)$/, rows_total: 4, source_columns: ['Full Name', 'E-mail', 'Signup (dd/mm/yyyy)', 'Notes'] });
  const done = (await waitFor(
    'the ETL job',
    async () => (await admin.request('GET', `${base}/${created.body.job_id}`)).body,
    (j: any) => j.status === 'succeeded' || j.status === 'failed',
    30_000,
  )) as Record<string, any>;
  t.match(done, {
    status: 'succeeded',
    rows_done: 4,
    plan: {
      planned_by: 'deterministic',
      mappings: [
        { target: 'name', source: 'Full Name' },
        { target: 'email', source: 'E-mail' },
        { target: 'signup_date', source: 'Signup (dd/mm/yyyy)', conversion: 'dd/mm/yyyy' },
      ],
      unmapped_source_columns: ['Notes'],
    },
    report: { rows_total: 4, rows_written: 3, rows_rejected: 1, cells_rejected: 2, issues_not_listed: 0 },
    download_mode: 'object_store_proxy',
    download_url: `${base}/${created.body.job_id}/download`,
    source_download_url: `${base}/${created.body.job_id}/source-csv`,
    target_schema_download_url: `${base}/${created.body.job_id}/target-schema-csv`,
  });
  t.match(done.report.issues, [
    { row: 1, column: 'signup_date', kind: 'coerced' },
    { row: 2, column: 'signup_date', kind: 'coerced' },
    { row: 3, column: 'name', kind: 'rejected', reason: /required/ },
    { row: 3, column: 'signup_date', kind: 'coerced' },
    { row: 4, column: 'signup_date', kind: 'rejected', reason: /not a date/ },
  ]);
  const output = (await admin.request('GET', `${base}/${created.body.job_id}/download`)).body as string;
  t.same(parse(output), [
    ['name', 'email', 'signup_date'],
    ['Ada Lovelace', 'ada@example.com', '2025-12-10'],
    ['Hopper, Grace', 'grace@example.com', '2026-01-25'],
    ['\'=HYPERLINK("x")', 'eve@example.com', ''],
  ]);
  t.equal((await admin.request('GET', `${base}/${created.body.job_id}/source-csv`)).body, SOURCE, 'the source as uploaded');
  t.equal((await admin.request('GET', `${base}/${created.body.job_id}/target-schema-csv`)).body, SCHEMA);
  const report = await fetch(`${host.url}${base}/${created.body.job_id}/report`, { headers: { cookie: admin.cookieHeader() } });
  t.match(JSON.parse(await report.text()), { job_id: created.body.job_id, plan: { planned_by: 'deterministic' }, report: { rows_written: 3 } });

  // Bad files: refused before anything is stored, each saying why.
  const before = (await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM etl_jobs'))[0]!.n;
  const refusals: [string, FormData, number, RegExp | string][] = [
    ['not a CSV', form({ source: ['x.png', '\x89PNG\r\n\x1a\n' + '\0'.repeat(20), 'image/png'], schema: [SCHEMA] }), 415, 'ETL_FILE_TYPE'],
    ['empty', job(''), 422, /is empty/],
    ['header only', job('Full Name,E-mail\n'), 422, /no data rows/],
    ['mismatched quotes', job('a,b\n1,"two\n3,4\n'), 422, /not a CSV this host reads/],
    ['uneven rows', job('a,b\n1,2\n3\n'), 422, /not a CSV this host reads/],
    ['not UTF-8', job(Buffer.from('Name\nJos\xe9\n', 'latin1')), 422, /UTF-8/],
    ['binary', job('a,b\n1,\0\n'), 422, /binary/],
    ['too large', job('a\n' + 'x\n'.repeat(3000)), 413, 'ETL_FILE_TOO_LARGE'],
    ['a schema with an unknown type', job(SOURCE, 'name,type,required\nname,string,yes\nage,number,no\n'), 422, /is not one of string, integer/],
    ['a schema without rows', job(SOURCE, 'name,type\n'), 422, /has no rows/],
    ['no schema', form({ source: ['customers.csv', SOURCE] }), 400, /target_schema_csv/],
  ];
  for (const [what, body, status, why] of refusals) {
    const answer = await admin.request('POST', base, body);
    t.equal(answer.status, status, `${what}: ${status}`);
    if (typeof why === 'string') t.equal(answer.body.code, why, `${what}: ${why}`);
    else t.match(JSON.stringify(answer.body.detail), why, `${what}: says why`);
  }
  const badType = await admin.request('POST', base, job(SOURCE, 'name,type,required\nname,string,yes\nage,number,no\n'));
  t.match(badType.body.detail, [{ loc: ['body', 'target_schema_csv', 2, 'type'] }], 'the schema problem names the row and column');
  t.equal((await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM etl_jobs'))[0]!.n, before, 'no refused job was stored');

  // The public alias: same shapes; a caller sees only the jobs made under its caller token.
  const caller = new AdminClient(host.url);
  const mine = await caller.request('POST', `/public${base}`, job(SOURCE));
  t.equal(mine.status, 201);
  t.match(mine.body, { channel: 'public', caller_token: /^[A-Za-z0-9_-]{43}$/ });
  const token = { 'x-caller-token': mine.body.caller_token };
  const publicDone = (await waitFor(
    'the public ETL job',
    async () => (await caller.request('GET', `/public${base}/${mine.body.job_id}`, undefined, token)).body,
    (j: any) => j.status === 'succeeded',
    30_000,
  )) as Record<string, any>;
  t.equal(publicDone.download_url, `/public${base}/${mine.body.job_id}/download`);
  t.equal((await caller.request('GET', `/public${base}/${mine.body.job_id}/download`, undefined, token)).status, 200);
  t.equal((await caller.request('GET', `/public${base}/${mine.body.job_id}`)).status, 404, 'without the token: not found');
  t.equal((await caller.request('GET', `/public${base}/${created.body.job_id}`, undefined, token)).status, 404, "an administrator's job is not the caller's");
  t.same((await caller.request('GET', `/public${base}`)).body.items, [], 'without a token the list is empty');
  t.same(
    (await caller.request('GET', `/public${base}`, undefined, token)).body.items.map((j: any) => j.job_id),
    [mine.body.job_id],
  );
  t.equal((await caller.request('GET', `/public/agents/${chat.agent_id}/etl-jobs`, undefined, token)).status, 404, 'only public etl agents');
  t.match(await caller.request('DELETE', `/public${base}/${mine.body.job_id}`, undefined, token), { status: 200, body: { status: 'deleted' } });
  t.equal((await admin.request('GET', `${base}/${mine.body.job_id}`)).status, 404, 'deleted, with its files');

  // agent_type cannot change while a job of the agent has not ended.
  await query(host.databaseUrl, "UPDATE etl_jobs SET status = 'queued' WHERE id = $1", [created.body.job_id]);
  t.match(await admin.request('PATCH', `/agents/${agent.agent_id}`, { agent_type: 'fusion' }), { status: 409, body: { code: 'AGENT_TYPE_CHANGE_REFUSED' } });
});

t.test('over the OpenAI protocol: the model’s plan is used, a botched one falls back, and the model sees a bounded sample', async (t) => {
  let botch = false;
  const fixture = await startOpenAiFixture({
    respond: (): FixtureReply =>
      botch
        ? { content: 'I would map them by name.' }
        : {
            content: JSON.stringify({
              mappings: [
                { target: 'name', source: 'Who', conversion: null, reason: 'the person' },
                { target: 'email', source: 'Reach at', conversion: null, reason: 'an address' },
                { target: 'signup_date', source: 'Joined', conversion: 'mm/dd/yyyy', reason: 'US dates' },
              ],
            }),
          },
  });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Importer', agent_type: 'etl', model_provider: 'openai', model_name: 'gpt-4o-mini' })).body;
  const base = `/agents/${agent.agent_id}/etl-jobs`;
  const rows = Array.from({ length: 100 }, (_, i) => `Person ${i},p${i}@example.com,01/${String((i % 28) + 1).padStart(2, '0')}/2026`);
  const source = `Who,Reach at,Joined\n${rows.join('\n')}\n`;
  const finished = async (id: string) =>
    (await waitFor(
      'the ETL job',
      async () => (await admin.request('GET', `${base}/${id}`)).body,
      (j: any) => j.status === 'succeeded' || j.status === 'failed',
      30_000,
    )) as Record<string, any>;

  const planned = await finished(
    (await admin.request('POST', base, form({ source: ['people.csv', source], schema: [SCHEMA], instructions: 'Dates are American.' }))).body.job_id,
  );
  t.match(planned, {
    status: 'succeeded',
    plan: { planned_by: 'model', mappings: [{ source: 'Who' }, { source: 'Reach at' }, { source: 'Joined', conversion: 'mm/dd/yyyy' }] },
    report: { rows_written: 100, rows_rejected: 0 },
    generation_usage: { token_usage_source: 'provider_reported' },
  });
  const asked = fixture.requests[0]!.body;
  t.equal(asked.response_format?.json_schema?.name, 'etl_column_plan', 'the plan is asked as structured output');
  t.match(asked.messages[0].content, /Dates are American\./, "with the user's instructions");
  t.equal(JSON.parse(asked.messages.at(-1).content).sample_rows.length, 20, 'the model sees [etl] sample_rows rows, not the file');
  const output = (await admin.request('GET', `${base}/${planned.job_id}/download`)).body as string;
  t.same(parse(output)[1], ['Person 0', 'p0@example.com', '2026-01-01']);
  t.same(parse(output)[28], ['Person 27', 'p27@example.com', '2026-01-28'], 'read as mm/dd/yyyy, the model’s layout');

  botch = true;
  const fallback = await finished((await admin.request('POST', base, job(SOURCE))).body.job_id);
  t.match(fallback, { status: 'succeeded', plan: { planned_by: 'deterministic', mappings: [{ source: 'Full Name', reason: /the model gave no plan/ }] } });
});
