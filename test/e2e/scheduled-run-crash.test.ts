// A fault of the scheduled-task runner: the host running a scheduled run is killed with SIGKILL mid-turn. The run's
// lease lapses with the dead process; another instance recovers it and runs it to its end, and the task's later due
// times still fire, once each.
import t from 'tap';
import { lastUserText, startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcess } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';

interface Run {
  id: string;
  status: string;
  attempt_count: number;
  turn_id: string | null;
  due_at: Date;
}

t.test('a host killed mid-run: another instance recovers the run, and later due times fire once each', async (t) => {
  let chunkDelayMs = 400;
  const model = await startOpenAiFixture({ respond: (body) => ({ chunks: ['re: ', ...lastUserText(body).split(/(?<= )/)], chunkDelayMs }) });
  t.teardown(() => model.close());
  const databaseUrl = await createTestDatabase(t);
  const env = { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${model.url}"`, AGENT_HOST__SCHEDULED_TASKS__MIN_INTERVAL_SECONDS: '1' };
  const doomed = await startHostProcess(t, databaseUrl, env, 'doomed');
  const admin = new AdminClient(doomed.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Crash scheduler', agent_type: 'chat', model_provider: 'openai', model_name: 'gpt-4o-mini' }))
    .body;
  const task = (
    await admin.request('POST', '/scheduled-tasks', {
      agent_id: agent.agent_id,
      schedule_payload: { kind: 'interval', every_seconds: 5, start_at: new Date(Date.now() + 1_000).toISOString() },
      payload: { message: 'check the order status of every parcel in the depot ' },
    })
  ).body;
  const runs = () =>
    query<Run>(databaseUrl, 'SELECT id, status, attempt_count, turn_id, due_at FROM scheduled_task_runs WHERE task_id = $1 ORDER BY due_at', [task.task_id]);

  // The first run streams slowly on the doomed instance; it is killed once the model is answering.
  const killed = await eventually(async () => {
    const [first] = await runs();
    return first?.status === 'running' && model.requests.length > 0 ? first : undefined;
  }, 'the first run, mid-turn');
  doomed.run.child.kill('SIGKILL');
  await doomed.run.exit;
  t.pass('killed with SIGKILL while its scheduled run streamed');
  chunkDelayMs = 0;

  const survivor = new AdminClient((await startHostProcess(t, databaseUrl, env, 'survivor')).url);
  await survivor.login();
  // Its lease lapses (run_lease_seconds = 10 in config/test.toml), the supervisor makes it recovering, and the
  // survivor runs it once the dead turn's place in its session's line has lapsed too.
  const recovered = await eventually(
    async () => (await runs()).find((r) => r.id === killed.id && r.status === 'succeeded'),
    'the killed run, recovered and finished',
    90_000,
    500,
  );
  t.equal(recovered.attempt_count, 2, 'claimed a second time, by the surviving instance');
  t.ok(recovered.turn_id, 'and its turn was stored');

  const later = await eventually(
    async () => {
      const all = await runs();
      return all.filter((r) => r.due_at > killed.due_at && r.status === 'succeeded').length >= 2 ? all : undefined;
    },
    'later due times to run',
    30_000,
    500,
  );
  await survivor.request('POST', `/scheduled-tasks/${task.task_id}/cancel`);
  t.equal(new Set(later.map((r) => r.due_at.getTime())).size, later.length, 'each due time has one run');
  t.ok(
    later.every((r) => ['succeeded', 'cancelled'].includes(r.status)),
    'every run ended: succeeded, or skipped while the killed one held the task',
  );
  const turns = await query<{ n: number }>(databaseUrl, `SELECT count(*)::int AS n FROM conversation_turns WHERE agent_id = $1 AND status = 'completed'`, [
    agent.agent_id,
  ]);
  t.same(
    turns,
    [{ n: later.filter((r) => r.status === 'succeeded').length }],
    'one completed turn per succeeded run: nothing of the killed turn was half-saved',
  );
});
