// A fault of the document-recognition worker: the host extracting a run is killed with SIGKILL while the model
// answers. The attempt's lease lapses with the dead process; another instance on the same database recovers the run
// under a new lease token, extracts it again and finishes it, once: one set of fields, no field twice.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { invoicePdf } from '../../examples/invoice.mjs';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcess } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';

const ANSWER = JSON.stringify({ fields: { invoice_number: 'INV-2026-0042', total: 1250 } });

t.test('a host killed mid-run: another instance recovers the document-recognition run and finishes it once', async (t) => {
  // The doomed instance's model call never answers; the survivor's answers at once.
  let stall = true;
  const model = await startOpenAiFixture({ respond: () => (stall ? { content: ANSWER, stallAfter: 0 } : { content: ANSWER }) });
  t.teardown(() => model.close());
  const databaseUrl = await createTestDatabase(t);
  // The instances share one object store, as instances on one database do (S3 in production): the upload is there for both.
  const objects = await mkdtemp(path.join(os.tmpdir(), 'agent-host-objects-'));
  t.teardown(() => rm(objects, { recursive: true, force: true }));
  const env = {
    'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${model.url}"`,
    AGENT_HOST__TIMEOUTS__MODEL_REQUEST_SECONDS: '120',
    AGENT_HOST__OBJECT_STORE__LOCAL_DIR: `"${objects}"`,
  };
  const doomed = await startHostProcess(t, databaseUrl, env, 'doomed');
  const admin = new AdminClient(doomed.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Crash invoices',
      agent_type: 'fusion',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      fusion_definition: {
        input_slots: [{ name: 'document', kind: 'file', accepted_content_types: ['application/pdf'] }],
        output_slots: [
          {
            name: 'fields',
            kind: 'structured_json',
            structured_output_profile: 'document_field_set',
            structured_output_schema: {
              type: 'object',
              required: ['invoice_number', 'total'],
              properties: { invoice_number: { type: 'string' }, total: { type: 'number' } },
            },
          },
        ],
      },
    })
  ).body;
  await admin.request('POST', `/agents/${agent.agent_id}/publish`);
  t.equal((await admin.request('PUT', `/admin/document-recognition/runtime-agents/${agent.agent_id}`)).status, 200);
  const form = new FormData();
  form.append('runtime_agent_id', agent.agent_id);
  form.append('file', new Blob([await invoicePdf()], { type: 'application/pdf' }), 'invoice.pdf');
  const created = (await new AdminClient(doomed.url).request('POST', '/document-recognition/runs', form)).body;
  t.match(created, { status: 'running', attempt_count: 1 }, 'claimed at once by the instance that made it');
  await eventually(async () => (model.requests.length >= 1 ? true : undefined), 'the model asked by the doomed instance', 30_000);
  const [first] = await query<{ lease_token: string }>(databaseUrl, 'SELECT lease_token FROM document_recognition_runs WHERE id = $1', [created.run_id]);
  doomed.run.child.kill('SIGKILL');
  await doomed.run.exit;
  stall = false;

  const survivor = new AdminClient((await startHostProcess(t, databaseUrl, env, 'survivor')).url);
  await survivor.login();
  // run_lease_seconds = 5 and supervisor_interval_seconds = 1 in config/test.toml.
  const done = await eventually(
    async () => {
      const read = (await survivor.request('GET', `/admin/document-recognition/runs/${created.run_id}`)).body;
      return read.status === 'succeeded' || read.status === 'failed' ? read : undefined;
    },
    'the run, recovered and finished',
    60_000,
    500,
  );
  t.match(done, { status: 'succeeded', attempt_count: 2, field_count: 2, preview_pages: [{ page_number: 1 }] });
  t.match(Object.fromEntries(done.field_reviews.map((f: any) => [f.field_id, f.extracted_value])), { invoice_number: 'INV-2026-0042', total: 1250 });
  t.equal(model.requests.length, 2, 'one model call per attempt');
  const [after] = await query(
    databaseUrl,
    `UPDATE document_recognition_runs SET status = 'failed' WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING status`,
    [created.run_id, first!.lease_token],
  );
  t.equal(after, undefined, "the dead attempt's lease token can no longer end the run");
});
