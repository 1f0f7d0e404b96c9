// A fault of the Fusion worker: the host executing a Fusion run is killed with SIGKILL while the model answers. The
// attempt's lease lapses with the dead process; another instance on the same database recovers the run under a new
// lease token and finishes it, once.
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcess } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';

const ANSWER = JSON.stringify({ fields: { name: 'Acme', total: 12.5 } });

t.test('a host killed mid-run: another instance recovers the Fusion run and finishes it once', async (t) => {
  // The doomed instance's model call never answers; the survivor's answers at once.
  let stall = true;
  const model = await startOpenAiFixture({ respond: () => (stall ? { content: ANSWER, stallAfter: 0 } : { content: ANSWER }) });
  t.teardown(() => model.close());
  const databaseUrl = await createTestDatabase(t);
  const env = { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${model.url}"`, AGENT_HOST__TIMEOUTS__MODEL_REQUEST_SECONDS: '120' };
  const doomed = await startHostProcess(t, databaseUrl, env, 'doomed');
  const admin = new AdminClient(doomed.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Crash Fusion',
      agent_type: 'fusion',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      fusion_definition: {
        input_slots: [{ name: 'text', kind: 'text' }],
        output_slots: [{ name: 'fields', kind: 'structured_json', structured_output_schema: { type: 'object', required: ['name', 'total'] } }],
      },
    })
  ).body;
  const created = (await admin.request('POST', `/agents/${agent.agent_id}/fusion-runs?wait_seconds=0`, { inputs: { text: 'Acme, 12.50' } })).body;
  t.match(created, { status: 'running', attempt_count: 1 }, 'claimed at once by the instance that made it');
  await eventually(async () => (model.requests.length >= 1 ? true : undefined), 'the model asked by the doomed instance');
  const [first] = await query<{ lease_token: string }>(databaseUrl, 'SELECT lease_token FROM fusion_runs WHERE id = $1', [created.run_id]);
  doomed.run.child.kill('SIGKILL');
  await doomed.run.exit;
  stall = false;

  const survivor = new AdminClient((await startHostProcess(t, databaseUrl, env, 'survivor')).url);
  await survivor.login();
  // run_lease_seconds = 5 and supervisor_interval_seconds = 1 in config/test.toml.
  const done = await eventually(
    async () => {
      const read = (await survivor.request('GET', `/agents/${agent.agent_id}/fusion-runs/${created.run_id}`)).body;
      return read.status === 'succeeded' || read.status === 'failed' ? read : undefined;
    },
    'the run, recovered and finished',
    60_000,
    500,
  );
  t.match(done, { status: 'succeeded', attempt_count: 2, lease_token: null, output_item_list: [{ json_value: { name: 'Acme', total: 12.5 } }] });
  t.equal(model.requests.length, 2, 'one model call per attempt');
  const [after] = await query<{ status: string; completed_at: Date }>(
    databaseUrl,
    `UPDATE fusion_runs SET status = 'failed' WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING status`,
    [created.run_id, first!.lease_token],
  );
  t.equal(after, undefined, "the dead attempt's lease token can no longer end the run");
});
