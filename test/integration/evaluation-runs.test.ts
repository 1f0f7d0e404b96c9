// Evaluation runs (spec 3.4, 4.9, issue 19): a frozen snapshot run through the agent's own runtime on the offline model
// (answers from its knowledge, the offline judge) with rule and judge scores, usage rollups and no conversation
// turns; over the OpenAI wire protocol, a judge that answers valid JSON, invalid JSON, or too late; the refusals.
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { startOpenAiFixture, lastUserText, type FixtureReply } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { waitFor } from '../helpers/job-counter.js';
import { createSource, ingest, uploadOk } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';
import { statementsOf } from '../helpers/statements.js';

const HANDBOOK = 'Items can be returned within 30 days of delivery.\n\nThe support desk answers from 9:00 to 17:00, Monday to Friday.';
const CSV =
  'question,expected_answer,expected_answer_2,domain,difficulty\n' +
  'Within how many days can items be returned?,Items can be returned within 30 days of delivery.,30 days,returns,easy\n' +
  'When does the support desk answer?,From 9:00 to 17:00 on weekdays,,support,easy\n' +
  'Who founded the company?,Ada and Grace,,history,hard\n' +
  '"=1+1, what is it?",2,,,easy\n';

type Client = AdminClient;

async function snapshotOf(admin: Client, csv: string) {
  const dataset = (await admin.request('POST', '/evaluation-datasets', { name: 'Support set', task_type: 'qa' })).body;
  const form = new FormData();
  form.append('file', new Blob([csv], { type: 'text/csv' }), 'support.csv');
  await admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/import`, form);
  const snapshot = (await admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/freeze`)).body;
  return { dataset, snapshot };
}

const finished = (admin: Client, agentId: string, runId: string) =>
  waitFor(
    `evaluation run ${runId}`,
    async () => (await admin.request('GET', `/agents/${agentId}/evaluation-runs/${runId}`)).body,
    (run: any) => run.execution_state === 'completed' || run.execution_state === 'failed',
    60_000,
  ) as Promise<Record<string, any>>;

t.test('offline: a run scores every item once, with rule and judge scores, and writes no conversation turn', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { name: 'Handbook' });
  await uploadOk(admin, source.source_id, { filename: 'handbook.md', contentType: 'text/markdown', data: HANDBOOK });
  await ingest(admin, source.source_id);
  const agent = (await admin.request('POST', '/agents', { name: 'Support', agent_type: 'chat' })).body;
  const mount = (await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: source.source_id })).body;
  const { dataset, snapshot } = await snapshotOf(admin, CSV);

  t.match(await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: dataset.dataset_id }), {
    status: 409,
    body: { code: 'EVALUATION_DATASET_NOT_FROZEN' },
  });
  const unknown = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: '00000000-0000-4000-8000-000000000000' });
  t.match(unknown, { status: 422, body: { detail: [{ loc: ['body', 'dataset_id'] }] } });
  const half = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: snapshot.dataset_id, model_name: 'gpt-4o-mini' });
  t.match(half, { status: 422, body: { detail: [{ loc: ['body', 'model_provider'] }] } });
  t.equal((await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs/not-a-run`)).status, 404);

  const created = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: snapshot.dataset_id });
  t.equal(created.status, 201);
  t.match(created.body, {
    execution_state: /^(queued|running)$/,
    item_count: 4,
    orchestrator_key: 'core_chat_v1',
    model_name: null,
    judge_prompt_version: 'default',
    completed_at: null,
  });
  t.match(created.body.judge_prompt, /grade an assistant's answer/, 'the built-in judge prompt is frozen into the run');
  const run = await finished(admin, agent.agent_id, created.body.run_id);
  t.match(run, { execution_state: 'completed', items_completed: 4, items_failed: 0, heartbeat_stale: false, attempt_count: 1 });
  t.type(run.completed_at, 'string');
  t.type(run.started_at, 'string');
  t.match(run.summary, { judged_count: 4, invalid_judge_count: 0 });
  t.ok(run.summary.pass_rate > 0 && run.summary.pass_rate < 1, `some items pass, some do not: ${JSON.stringify(run.summary)}`);
  t.equal(run.generation_usage_rollup.tokenizer_estimated_count, 4, 'the offline model reports no usage: estimated');
  t.equal(run.judge_usage_rollup.tokenizer_estimated_count, 4);
  t.equal(run.combined_total_tokens, run.generation_usage_rollup.total_tokens + run.judge_usage_rollup.total_tokens);

  const results = (await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}/results`)).body;
  t.equal(results.total, 4);
  const [returns, desk, founders] = results.items;
  t.match(returns, {
    position: 1,
    status: 'succeeded',
    domain: 'returns',
    predicted_answer: /returned within 30 days/,
    // The offline model quotes its passage with the file's label, so the answer passes by F1 rather than exactly.
    rule_score: { exact_match: 0, pass_rate: 1, matched_expected_answer_index: 0 },
    judge_status: 'scored',
    judge_score: { score: 1, rubric_version: 'v1', issues: [] },
    generation_usage: { token_usage_source: 'tokenizer_estimated' },
  });
  t.ok(returns.rule_score.token_f1 >= 0.8, `token F1 ${returns.rule_score.token_f1}`);
  t.match(JSON.parse(returns.judge_score.raw_response_text), { score: 1 }, 'the raw judge reply is kept');
  t.match(desk.rule_score, { exact_match: 0 });
  t.ok(desk.rule_score.token_f1 > 0, 'a partly matching answer has some F1');
  t.match(founders, {
    rule_score: { exact_match: 0, matched_expected_answer_index: null },
    judge_score: { score: 0, suggested_better_answer: 'Ada and Grace' },
  });

  const [{ turns }] = await query<{ turns: number }>(host.databaseUrl, 'SELECT count(*)::int AS turns FROM conversation_turns WHERE agent_id = $1', [
    agent.agent_id,
  ]);
  t.equal(turns, 0, 'no conversation turn was written');
  t.same(
    (await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs`)).body.items.map((r: any) => r.run_id),
    [run.run_id],
  );
  t.same(
    (await admin.request('GET', `/evaluation-datasets/${snapshot.dataset_id}/runs`)).body.items.map((r: any) => r.run_id),
    [run.run_id],
  );
  const cost = (await admin.request('GET', `/agents/${agent.agent_id}/cost-overview`)).body;
  t.same(cost.evaluation_generation_usage_rollup, run.generation_usage_rollup, "the cost overview counts the run's answers");
  t.same(cost.evaluation_judge_usage_rollup, run.judge_usage_rollup, 'and its judgements');

  await t.test('results.csv: every result streamed, formula-like text escaped', async (t) => {
    const csv = await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}/results.csv`);
    t.equal(csv.status, 200);
    t.match(csv.headers.get('content-type'), /^text\/csv/);
    t.match(csv.headers.get('content-disposition'), /attachment; filename="evaluation-run-/);
    const rows = parse(csv.body, { columns: true }) as Record<string, string>[];
    t.same(
      rows.map((r) => r.position),
      ['1', '2', '3', '4'],
    );
    t.match(rows[0], {
      item_id: returns.item_id,
      exact_match: '0',
      pass_rate: '1',
      judge_status: 'scored',
      judge_score: '1',
      generation_usage_source: 'tokenizer_estimated',
    });
    t.equal(rows[3]!.question, "'=1+1, what is it?", 'a cell a spreadsheet would run is escaped');
    t.same(JSON.parse(rows[0]!.rule_score_json!), returns.rule_score);
  });

  await t.test('slices by domain, difficulty and source', async (t) => {
    const slices = (await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}/slices`)).body;
    t.same(
      slices.by_domain.map((s: any) => [s.value, s.item_count]),
      [
        ['history', 1],
        ['returns', 1],
        ['support', 1],
        [null, 1],
      ],
    );
    t.same(
      slices.by_difficulty.map((s: any) => [s.value, s.item_count]),
      [
        ['easy', 3],
        ['hard', 1],
      ],
    );
    t.match(slices.by_domain[1], { value: 'returns', pass_rate: 1, mean_judge_score: 1, failed_count: 0 });
  });

  await t.test('the gate: a verdict with the policy used and a reason per failed condition', async (t) => {
    const strict = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}/evaluate-gate`, { minimum_items: 10 });
    t.equal(strict.status, 201);
    t.match(strict.body, { passed: false, policy: { minimum_items: 10, score_pass_rate_min: 0.8 }, metrics: { items: 4 } });
    t.match(strict.body.reasons, [/^minimum_items: 4 items were scored; at least 10/, /^score_pass_rate_min: pass rate/]);
    const lenient = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}/evaluate-gate`, {
      score_pass_rate_min: 0,
      score_f1_min: 0,
      llm_judge_min: 0,
      max_failed_item_ratio: 1,
    });
    t.match(lenient.body, { passed: true, reasons: [] });
    const [{ verdicts }] = await query<{ verdicts: number }>(
      host.databaseUrl,
      'SELECT count(*)::int AS verdicts FROM evaluation_gate_verdicts WHERE run_id = $1',
      [run.run_id],
    );
    t.equal(verdicts, 2, 'each verdict is kept');
  });

  await t.test('compare: a second run without the knowledge regresses item by item', async (t) => {
    await admin.request('DELETE', `/agents/${agent.agent_id}/mounts/${mount.mount_id}`);
    const second = await finished(
      admin,
      agent.agent_id,
      (await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: snapshot.dataset_id })).body.run_id,
    );
    const compared = await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${second.run_id}/compare?baseline_run_id=${run.run_id}`);
    t.equal(compared.status, 200);
    t.match(compared.body.summary, { improved: 0 });
    t.ok(compared.body.summary.regressed >= 2, `items regressed: ${JSON.stringify(compared.body.summary)}`);
    t.ok(compared.body.summary.delta_mean_token_f1 < 0);
    t.match(compared.body.items[0], {
      position: 1,
      change: 'regressed',
      baseline: { token_f1: returns.rule_score.token_f1 },
      candidate: { status: 'succeeded' },
    });
    const other = (await admin.request('POST', `/evaluation-datasets/${dataset.dataset_id}/freeze`)).body;
    const elsewhere = await finished(
      admin,
      agent.agent_id,
      (await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: other.dataset_id })).body.run_id,
    );
    t.match(await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${elsewhere.run_id}/compare?baseline_run_id=${run.run_id}`), {
      status: 409,
      body: { code: 'EVALUATION_RUNS_NOT_COMPARABLE' },
    });
  });

  const guarded = await admin.request('DELETE', `/evaluation-datasets/${snapshot.dataset_id}`);
  t.match(guarded, {
    status: 409,
    body: {
      detail: {
        code: 'DATASET_REFERENCED_BY_EVALUATION_RUNS',
        evaluation_run_count: 2,
        referencing_agents: [{ agent_id: agent.agent_id, agent_name: 'Support', run_count: 2 }],
      },
    },
  });
  t.type(guarded.body.detail.referencing_agents[0].last_run_at, 'string');
});

t.test('OpenAI wire protocol: an explicit model, a judge that answers JSON, invalid JSON, or past the timeout', async (t) => {
  const judge = (body: any): FixtureReply => {
    const item = JSON.parse(lastUserText(body)) as { answer: string };
    if (item.answer.includes('slow')) return { content: '{"score": 1}', delayMs: 4_000 };
    if (item.answer.includes('garbled')) return { content: 'I think it is fine.' };
    return {
      content: JSON.stringify({
        score: 0.75,
        reason: 'mostly right',
        issues: ['vague'],
        improvement_suggestions: [],
        suggested_better_answer: '',
        confidence: 0.9,
      }),
    };
  };
  const fixture = await startOpenAiFixture({
    // The judge is known by its prompt: a judge refusing structured output is asked again without response_format.
    respond: (body) =>
      /grade an assistant's answer/.test(body.messages[0].content)
        ? judge(body)
        : { content: lastUserText(body) === 'nul' ? 'Answer:\0nul' : `Answer: ${lastUserText(body)}` },
  });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, {
    env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`, AGENT_HOST__TIMEOUTS__MODEL_REQUEST_SECONDS: '2' },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Routed',
      agent_type: 'chat',
      model_routing_config: { enabled: true, general_model: { model_name: 'gpt-4o-mini', model_provider: 'openai' } },
    })
  ).body;
  const { snapshot } = await snapshotOf(admin, 'question,expected_answer\nfine,Answer: fine\ngarbled,x\nslow,x\nnul,x\n');
  const created = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, {
    dataset_id: snapshot.dataset_id,
    model_name: 'gpt-4o-mini',
    model_provider: 'openai',
    model_temperature: 0.2,
  });
  t.match(
    created.body,
    { model_name: 'gpt-4o-mini', model_provider: 'openai', model_temperature: 0.2, model_routing_config: null },
    'an explicit model leaves no routing',
  );
  const run = await finished(admin, agent.agent_id, created.body.run_id);
  t.match(run, { execution_state: 'completed', items_completed: 3, items_failed: 1, summary: { judged_count: 2, invalid_judge_count: 1 } });
  const [fine, garbled, slow, nul] = (await admin.request('GET', `/agents/${agent.agent_id}/evaluation-runs/${run.run_id}/results`)).body.items;
  t.match(fine, {
    predicted_answer: 'Answer: fine',
    rule_score: { exact_match: 1 },
    judge_status: 'scored',
    judge_score: { score: 0.75, reason: 'mostly right', issues: ['vague'], confidence: 0.9 },
    generation_usage: { token_usage_source: 'provider_reported' },
    judge_usage: { token_usage_source: 'provider_reported' },
  });
  t.match(garbled, { status: 'succeeded', judge_status: 'invalid_json', judge_score: { score: null, raw_response_text: 'I think it is fine.' } });
  t.match(slow, { status: 'failed', judge_status: 'failed', error_message: /the judge failed: .*(time|in time)/i, rule_score: { exact_match: 0 } });
  t.match(nul, { status: 'succeeded', predicted_answer: 'Answer:\\0nul' }, 'a NUL in an answer is stored as the two characters \\0, as in chat');
  const cost = (await admin.request('GET', `/agents/${agent.agent_id}/cost-overview`)).body;
  t.match(cost.evaluation_generation_estimated_cost, { estimated_interaction_count: 4, missing_pricing_count: 0 }, 'each answer is priced');
  t.ok(cost.evaluation_generation_estimated_cost.total_cost_usd > 0 && cost.evaluation_judge_estimated_cost.total_cost_usd > 0, 'answers and judgements cost');
  t.equal(
    cost.combined_estimated_cost.total_cost_usd,
    Math.round((cost.evaluation_generation_estimated_cost.total_cost_usd + cost.evaluation_judge_estimated_cost.total_cost_usd) * 1e6) / 1e6,
    'and count toward the combined estimate',
  );
  const judged = fixture.requests.filter((r) => r.body?.response_format?.json_schema?.name === 'evaluation_judge');
  t.equal(judged.length, 4, 'each item was judged once with structured output');
  t.ok(
    fixture.requests.every((r) => r.body.model === 'gpt-4o-mini' && r.body.temperature === 0.2),
    'answers and judgements use the run’s model',
  );

  const ITEMS = 30;
  const many = await snapshotOf(admin, `question,expected_answer\n${Array.from({ length: ITEMS }, (_, i) => `q${i},Answer: q${i}`).join('\n')}\n`);
  let batched: Record<string, any> = {};
  const inserts = await statementsOf(
    new URL(host.databaseUrl).pathname.slice(1),
    async () => {
      const made = await admin.request('POST', `/agents/${agent.agent_id}/evaluation-runs`, { dataset_id: many.snapshot.dataset_id });
      batched = await finished(admin, agent.agent_id, made.body.run_id);
    },
    (text) => text.includes('INSERT INTO evaluation_results'),
  );
  t.match(batched, { execution_state: 'completed', items_completed: ITEMS, summary: { judged_count: ITEMS } });
  // A batch waits a quarter of a second at most: only a machine slower than 80 ms per item at 4 items at a time would write 10.
  t.ok(inserts.length >= 1 && inserts.length < 10, `${ITEMS} results are stored a batch to a statement: ${inserts.length} statements`);
});
