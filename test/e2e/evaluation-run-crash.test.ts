// A fault of the evaluation runner: the host running an evaluation run is killed with SIGKILL mid-run. The run's lease
// lapses with the dead process; another instance on the same database recovers it, resumes the items not yet scored,
// and finishes with every item scored exactly once.
import t from 'tap';
import { lastUserText, startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcess } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';

const ITEMS = 12;

t.test('a host killed mid-run: another instance recovers the run and scores every item once', async (t) => {
  let delayMs = 300;
  // Answers and judgements each take a while on the doomed instance, so the run is killed part of the way through.
  const model = await startOpenAiFixture({
    respond: (body) =>
      body.response_format?.json_schema?.name === 'evaluation_judge'
        ? { content: JSON.stringify({ score: 1, reason: 'ok', issues: [], improvement_suggestions: [], suggested_better_answer: '', confidence: 1 }), delayMs }
        : { content: `answer to ${lastUserText(body)}`, delayMs },
  });
  t.teardown(() => model.close());
  const databaseUrl = await createTestDatabase(t);
  const env = { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${model.url}"`, AGENT_HOST__EVALUATION__ITEM_CONCURRENCY: '2' };
  const doomed = await startHostProcess(t, databaseUrl, env, 'doomed');
  const admin = new AdminClient(doomed.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Crash evaluation', agent_type: 'chat', model_provider: 'openai', model_name: 'gpt-4o-mini' }))
    .body;
  const dataset = (await admin.request('POST', '/evaluation-datasets', { name: 'Crash set', task_type: 'qa' })).body;
  const rows = Array.from({ length: ITEMS }, (_, i) => `question ${i + 1},answer to question ${i + 1}`);
  const form = new FormData();
  form.append('file', new Blob([`question,expected_answer\n${rows.join('\n')}\n`], { type: 'text/csv' }), 'crash.csv');
  await admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/import`, form);
  const snapshot = (await admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/freeze`)).body;
  const run = (await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: snapshot.dataset_id })).body;
  const scored = async () =>
    (await query<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM evaluation_results WHERE run_id = $1', [run.run_id]))[0]!.n;

  await eventually(async () => ((await scored()) >= 2 ? true : undefined), 'some items scored on the doomed instance');
  doomed.run.child.kill('SIGKILL');
  await doomed.run.exit;
  const before = await scored();
  t.ok(before < ITEMS, `killed with SIGKILL after ${before} of ${ITEMS} items`);
  delayMs = 0;

  const survivor = new AdminClient((await startHostProcess(t, databaseUrl, env, 'survivor')).url);
  await survivor.login();
  const stale = await eventually(async () => {
    const read = (await survivor.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}`)).body;
    return ['heartbeat_expired', 'recovering', 'running', 'completed'].includes(read.execution_state) && read.attempt_count >= 1 ? read : undefined;
  }, 'the run read on the survivor');
  t.ok(stale, `read as ${stale.execution_state} while its lease lapses`);
  // run_lease_seconds = 10 in config/test.toml: recovery within two lease timeouts of the kill, plus the finish.
  const done = await eventually(
    async () => {
      const read = (await survivor.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}`)).body;
      return read.execution_state === 'completed' ? read : undefined;
    },
    'the run, recovered and completed',
    60_000,
    500,
  );
  t.match(done, { items_completed: ITEMS, items_failed: 0, attempt_count: 2 });
  const positions = await query<{ position: number; n: number }>(
    databaseUrl,
    'SELECT position, count(*)::int AS n FROM evaluation_results WHERE run_id = $1 GROUP BY position ORDER BY position',
    [run.run_id],
  );
  t.same(
    positions.map((p) => p.n),
    Array.from({ length: ITEMS }, () => 1),
    'every item scored exactly once',
  );
  const turns = await query<{ n: number }>(databaseUrl, 'SELECT count(*)::int AS n FROM conversation_turns WHERE agent_id = $1', [agent.agent_id]);
  t.same(turns, [{ n: 0 }], 'no conversation turn was written by either instance');
});
