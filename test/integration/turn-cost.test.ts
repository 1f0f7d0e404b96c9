// Estimated cost of a routed turn (spec 2.5): react_agent_v1's first step runs
// on the routing config's tool_call_model and its answer on the final model,
// each call is priced at its own model's catalog prices, and the cost overview
// and the cost limits see the same figures.
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';

const entry = (model_provider: string, model_name: string, prices = '') =>
  `{ model_name = "${model_name}", model_provider = "${model_provider}", description = "${model_name}", category = "chat"${prices} }`;
const CATALOG = `[${[
  entry('offline', 'offline-extractive', ', input_price_per_million_tokens = 0, output_price_per_million_tokens = 0'),
  entry('openai', 'tools-model', ', input_price_per_million_tokens = 1, output_price_per_million_tokens = 2'),
  entry('openai', 'final-model', ', input_price_per_million_tokens = 10, output_price_per_million_tokens = 20'),
  entry('openai', 'unpriced-model'),
].join(', ')}]`;

t.test('a routed turn is priced call by call', async (t) => {
  // Step 1 (tools offered) asks for search_knowledge; step 2 answers. Each reports its usage.
  const fixture = await startOpenAiFixture({
    respond: (body) =>
      (body.messages as { role: string }[]).some((m) => m.role === 'tool')
        ? { content: 'Order A-17 ships Monday.', usage: { prompt_tokens: 200, completion_tokens: 20 } }
        : { tool_calls: [{ name: 'search_knowledge', arguments: { query: 'A-17' } }], usage: { prompt_tokens: 100, completion_tokens: 10 } },
  });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, {
    env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`, AGENT_HOST__MODELS__CATALOG: CATALOG },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const routedAgent = async (toolModel: string, limits: Record<string, number> = {}) =>
    (
      await admin.request('POST', '/agents', {
        name: `routed via ${toolModel}`,
        agent_type: 'chat',
        orchestrator_key: 'react_agent_v1',
        public_access_mode: 'public_anonymous',
        model_provider: 'openai',
        model_name: 'final-model',
        model_routing_config: {
          enabled: true,
          tool_call_model: { model_provider: 'openai', model_name: toolModel },
          general_model: { model_provider: 'openai', model_name: 'final-model' },
        },
        ...limits,
      })
    ).body.agent_id as string;
  const turnOf = async (thread: string) => (await query(host.databaseUrl, 'SELECT * FROM conversation_turns WHERE session_id = $1', [thread]))[0]!;

  t.test('each call at its own model, summed; the overview and the cost limit count the same', async (t) => {
    const agentId = await routedAgent('tools-model', { max_cost_usd_daily: 0.003 });
    await admin.stream({ thread_id: 'priced-1', agent_id: agentId, message: 'Where is order A-17' });
    t.same(
      fixture.bodies.map((b) => b.model),
      ['tools-model', 'final-model'],
      'step 1 on the tool_call model, the answer on the final model',
    );
    const turn = await turnOf('priced-1');
    t.same([turn.model_name, turn.input_tokens, turn.output_tokens, turn.token_usage_source], ['final-model', 300, 30, 'provider_reported']);
    // tools-model: 100 * 1 + 10 * 2 = 120 micro-USD; final-model: 200 * 10 + 20 * 20 = 2400 (the final model alone would price the turn at 3600).
    t.same(
      [Number(turn.estimated_cost_usd), Number(turn.estimated_input_cost_usd), Number(turn.estimated_output_cost_usd), turn.pricing_missing],
      [0.00252, 0.0021, 0.00042, false],
    );
    const overview = (await admin.request('GET', `/agents/${agentId}/cost-overview`)).body;
    t.same(overview.conversation_estimated_cost, {
      input_cost_usd: 0.0021,
      output_cost_usd: 0.00042,
      total_cost_usd: 0.00252,
      estimated_interaction_count: 1,
      missing_pricing_count: 0,
    });
    const second = await admin.stream({ thread_id: 'priced-2', agent_id: agentId, message: 'Where is order A-17' });
    t.notOk(
      second.events.some((e) => e.type === 'error'),
      'one turn (0.00252) is under a 0.003 daily cost limit (priced at the final model alone, 0.0036, it would not be)',
    );
    const refused = await admin.stream({ thread_id: 'priced-3', agent_id: agentId, message: 'Where is order A-17' });
    t.match(refused.events[0]?.content, /max_cost_usd_daily limit \(0\.003\)/, 'two turns reach it');

    // The first turn moved two days back: usage by day puts it there, the rest today, and days without turns at zero.
    await query(host.databaseUrl, "UPDATE conversation_turns SET created_at = created_at - interval '2 days' WHERE session_id = 'priced-1'");
    const moved = await turnOf('priced-1');
    const byDay = (await admin.request('GET', `/agents/${agentId}/usage-by-day?days=7`)).body;
    t.same(
      byDay.days.map((day: { date: string }) => day.date),
      Array.from({ length: 7 }, (_, i) => new Date(Date.now() - (6 - i) * 86_400_000).toISOString().slice(0, 10)),
      'the last seven UTC days, oldest first',
    );
    const [twoDaysAgo, yesterday, today] = byDay.days.slice(-3);
    t.match(
      twoDaysAgo,
      { turns: 1, input_tokens: Number(moved.input_tokens), output_tokens: Number(moved.output_tokens), estimated_cost_usd: 0.00252 },
      'the moved turn, with its tokens and cost',
    );
    t.match(yesterday, { turns: 0, total_tokens: 0, estimated_cost_usd: 0 }, 'a day without turns counts zero');
    const [others] = await query<{ count: string }>(
      host.databaseUrl,
      "SELECT count(*) FROM conversation_turns WHERE agent_id = $1 AND session_id <> 'priced-1'",
      [agentId],
    );
    t.equal(today.turns, Number(others!.count), "today's turns");
    t.equal((await admin.request('GET', `/agents/${agentId}/usage-by-day?days=0`)).status, 422, 'days below 1 is refused');
  });

  t.test('a call on an unpriced model leaves the turn unestimated and counts it once as missing pricing', async (t) => {
    const agentId = await routedAgent('unpriced-model');
    await admin.stream({ thread_id: 'unpriced-1', agent_id: agentId, message: 'Where is order A-17' });
    const turn = await turnOf('unpriced-1');
    t.same(
      [turn.model_name, turn.estimated_cost_usd, turn.pricing_missing],
      ['final-model', null, true],
      'the final model is priced, the tool-call model is not',
    );
    const overview = (await admin.request('GET', `/agents/${agentId}/cost-overview`)).body;
    t.same(overview.conversation_estimated_cost, {
      input_cost_usd: 0,
      output_cost_usd: 0,
      total_cost_usd: 0,
      estimated_interaction_count: 0,
      missing_pricing_count: 1,
    });
    t.same(overview.combined_estimated_cost, overview.conversation_estimated_cost);
  });
});
