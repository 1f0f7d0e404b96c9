import { randomUUID } from 'node:crypto';
import t from 'tap';
import { RequestLimitStore } from '../../core/src/chat/request-limit-store.js';
import { RequestLimits } from '../../core/src/chat/request-limits.js';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { rowsRead } from '../helpers/plan.js';
import { query } from '../helpers/services.js';
import { stream, tokensOf } from '../helpers/sse.js';
import { sentStatementsOf } from '../helpers/statements.js';

/** `count` (1) persisted turns `daysAgo` UTC days back, each with the given tokens and cost. */
async function pastTurn(
  databaseUrl: string,
  agentId: string,
  options: { daysAgo: number; tokens?: number; cost?: number; counts?: boolean; caller?: string; count?: number },
) {
  const session = `past-${randomUUID()}`;
  const message = randomUUID();
  await query(databaseUrl, 'INSERT INTO chat_sessions (id, agent_id) VALUES ($1, $2)', [session, agentId]);
  await query(databaseUrl, "INSERT INTO chat_messages (id, session_id, role, content) VALUES ($1, $2, 'user', 'old')", [message, session]);
  await query(
    databaseUrl,
    `INSERT INTO conversation_turns (id, session_id, agent_id, user_message_id, message_type, response_source, status, total_tokens, token_usage_source,
       estimated_cost_usd, counts_toward_limits, caller_key, trace_id, latency_ms, created_at)
     SELECT gen_random_uuid(), $1, $2, $3, 'user_chat', 'model', 'completed', $4, 'provider_reported', $5, $6, $7, 'trace', 1, now() - make_interval(days => $8)
     FROM generate_series(1, $9::int)`,
    [session, agentId, message, options.tokens ?? 0, options.cost ?? 0, options.counts ?? true, options.caller ?? null, options.daysAgo, options.count ?? 1],
  );
}

for (const quota of [0, 3])
  t.test(quota ? 'the per-caller quota' : 'agent limits over UTC windows', async (t) => {
    const host = await startTestHost(t, { env: { AGENT_HOST__AGENT__PER_CALLER_DAILY_REQUESTS: String(quota) } });
    const admin = new AdminClient(host.url);
    await admin.login();
    const agentWith = async (limits: Record<string, number>) =>
      (await admin.request('POST', '/agents', { name: 'limited', agent_type: 'chat', public_access_mode: 'public_anonymous', ...limits })).body
        .agent_id as string;
    // Anonymous callers, each request a new session the server issues.
    const ask = (agentId: string) => stream(host.url, { agent_id: agentId, message: 'hello' });
    const refusedWith = async (agentId: string, pattern: RegExp) => {
      const { events } = await ask(agentId);
      t.same(
        events.map((e) => e.type),
        ['error', 'done'],
      );
      t.match(events[0]!.content, pattern);
    };

    if (!quota)
      t.test('max_requests_per_day counts only today (UTC); max_total_requests counts every day', async (t) => {
        const daily = await agentWith({ max_requests_per_day: 1 });
        await pastTurn(host.databaseUrl, daily, { daysAgo: 1 });
        t.notOk(
          (await ask(daily)).events.some((e) => e.type === 'error'),
          "yesterday's turn does not count toward today",
        );
        await refusedWith(daily, /max_requests_per_day limit \(1\)/);
        const total = await agentWith({ max_total_requests: 1 });
        await pastTurn(host.databaseUrl, total, { daysAgo: 40 });
        await refusedWith(total, /max_total_requests limit \(1\)/);
      });

    if (!quota)
      t.test('token and cost limits, daily and monthly', async (t) => {
        const tokensDaily = await agentWith({ max_total_tokens_daily: 100 });
        await pastTurn(host.databaseUrl, tokensDaily, { daysAgo: 0, tokens: 100 });
        await refusedWith(tokensDaily, /max_total_tokens_daily limit \(100\)/);
        const tokensMonthly = await agentWith({ max_total_tokens_monthly: 100 });
        await pastTurn(host.databaseUrl, tokensMonthly, { daysAgo: 40, tokens: 500 });
        t.notOk(
          (await ask(tokensMonthly)).events.some((e) => e.type === 'error'),
          'last month does not count',
        );
        const costDaily = await agentWith({ max_cost_usd_daily: 0.5 });
        await pastTurn(host.databaseUrl, costDaily, { daysAgo: 0, cost: 0.25 });
        t.notOk(
          (await ask(costDaily)).events.some((e) => e.type === 'error'),
          'under the cost limit',
        );
        await pastTurn(host.databaseUrl, costDaily, { daysAgo: 0, cost: 0.25 });
        await refusedWith(costDaily, /max_cost_usd_daily limit \(0\.5\)/);
        // The 1st of this month (UTC): in this month's window, and not today unless today is the 1st.
        const earlierThisMonth = new Date().getUTCDate() - 1;
        const monthlyHit = await agentWith({ max_total_tokens_monthly: 100 });
        await pastTurn(host.databaseUrl, monthlyHit, { daysAgo: earlierThisMonth, tokens: 60 });
        t.notOk(
          (await ask(monthlyHit)).events.some((e) => e.type === 'error'),
          'under the monthly token limit',
        );
        // Turns are stored as they happen, so what is added now is today's: the month adds earlier days and today.
        await pastTurn(host.databaseUrl, monthlyHit, { daysAgo: 0, tokens: 40 });
        await refusedWith(monthlyHit, /max_total_tokens_monthly limit \(100\)/);
        const costMonthly = await agentWith({ max_cost_usd_monthly: 1 });
        await pastTurn(host.databaseUrl, costMonthly, { daysAgo: 40, cost: 5 });
        await pastTurn(host.databaseUrl, costMonthly, { daysAgo: earlierThisMonth, cost: 0.5 });
        t.notOk(
          (await ask(costMonthly)).events.some((e) => e.type === 'error'),
          "last month's cost does not count",
        );
        await pastTurn(host.databaseUrl, costMonthly, { daysAgo: 0, cost: 0.5 });
        await refusedWith(costMonthly, /max_cost_usd_monthly limit \(1\)/);
        const uncounted = await agentWith({ max_total_tokens_daily: 100 });
        await pastTurn(host.databaseUrl, uncounted, { daysAgo: 0, tokens: 1000, counts: false });
        t.notOk(
          (await ask(uncounted)).events.some((e) => e.type === 'error'),
          'turns that do not count (fixed responses) are ignored',
        );
      });

    if (!quota)
      t.test("a limit check reads today's turns, the totals of earlier days this month and at most max_total_requests more", async (t) => {
        const agentId = await agentWith({ max_total_requests: 5, max_total_tokens_monthly: 100_000 });
        await pastTurn(host.databaseUrl, agentId, { daysAgo: 40, tokens: 10, count: 1000 });
        // Earlier this month, on a closed day (none on the 1st, nor in the first minutes of the 2nd).
        const today = new Date(Date.now() - 10 * 60_000).getUTCDate();
        const earlier = today >= 2 ? 300 : 0;
        if (earlier) await pastTurn(host.databaseUrl, agentId, { daysAgo: today - 1, tokens: 10, count: earlier });
        await pastTurn(host.databaseUrl, agentId, { daysAgo: 0, tokens: 10, count: 2 });
        await query(host.databaseUrl, 'ANALYZE conversation_turns');
        const store = new RequestLimitStore(host.app.sequelize!);
        const database = new URL(host.databaseUrl).pathname.slice(1);
        const expected = { total: '5', today: '2', tokens_today: '20', tokens_month: String((earlier + 2) * 10) };
        // The statements the checks send about turns, the second explained with its values: how many turns it read.
        const sent = await sentStatementsOf(
          database,
          async () => {
            t.match(await store.agentUsage(agentId, { month: true, totalUpTo: 5 }), expected, "the first check totals this month's earlier days");
            t.match(await store.agentUsage(agentId, { month: true, totalUpTo: 5 }), expected, 'a later one reads their totals');
          },
          (text) => /conversation_turns|agent_usage_days/.test(text),
        );
        t.same(
          await query(host.databaseUrl, 'SELECT sum(turns)::int AS turns FROM agent_usage_days WHERE agent_id = $1', [agentId]),
          [{ turns: earlier || null }],
          'one total a closed day',
        );
        t.equal(sent.length, 2, 'one statement a check');
        const read = await rowsRead(host.databaseUrl, sent[1]!.text, sent[1]!.values, 'conversation_turns');
        t.ok(read <= 50, `a check read ${read} of the agent's ${1002 + earlier} turns (today's and at most 5 more)`);
      });

    if (quota)
      t.test('the per-caller quota counts a caller across agents, never fixed responses', async (t) => {
        const a = await agentWith({});
        const b = (
          await admin.request('POST', '/agents', {
            name: 'fixed',
            agent_type: 'chat',
            public_access_mode: 'public_anonymous',
            message_type_response_config: { rule: { enabled: true, response_text: 'ok' } },
          })
        ).body.agent_id;
        await ask(a);
        await ask(b);
        for (let i = 0; i < 3; i++)
          t.equal(tokensOf((await stream(host.url, { agent_id: b, message: 'x', message_type: 'rule' })).events), 'ok', 'fixed responses are not counted');
        await ask(a);
        const { events } = await ask(b);
        t.same(
          events.map((e) => e.type),
          ['error', 'done'],
          'the fourth model turn of the day is refused',
        );
        t.match(events[0]!.content, /daily request quota \(3\)/);
        t.equal(tokensOf((await stream(host.url, { agent_id: b, message: 'x', message_type: 'rule' })).events), 'ok', 'and fixed responses still answer');
      });
  });

t.test('max_concurrent_requests leases: counted while a turn runs, renewed however long it runs', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const fixture = await startOpenAiFixture({ respond: () => ({ chunks: ['slow ', 'reply'], beforeChunk: (index) => (index === 2 ? gate : undefined) }) }); // event 0 is the role chunk, 1 the first token
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Two at a time',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      max_concurrent_requests: 2,
    })
  ).body;
  const active = async () => (await admin.request('GET', `/agents/${agent.agent_id}/cost-overview`)).body.active_request_count;

  t.test('cost-overview active_request_count counts a request while it is answered', async (t) => {
    t.equal(await active(), 0);
    const response = await fetch(`${host.url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_id: agent.agent_id, message: 'hi' }),
    });
    const reader = response.body!.getReader();
    t.match(new TextDecoder().decode((await reader.read()).value), /"type":"token"/, 'the reply is under way');
    t.equal(await active(), 1, 'the held request is active');
    release();
    while (!(await reader.read()).done);
    t.equal(await active(), 0, 'and no longer once it is done');
  });

  t.test('a lease is renewed while held, so a turn longer than the lease keeps its slot', async (t) => {
    const limits = new RequestLimits(host.app.sequelize!, 'test-instance', 0, 3); // a 3 s lease, renewed every second
    const lease = await limits.acquire(agent.agent_id, 1);
    t.ok(lease, 'the only slot is taken');
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    t.equal(await limits.acquire(agent.agent_id, 1), undefined, 'more than two lease lifetimes later the slot is still held');
    await lease!.release();
    const next = await limits.acquire(agent.agent_id, 1);
    t.ok(next, 'released, the slot is free at once');
    await next!.release();
  });
});
