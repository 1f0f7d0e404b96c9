import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, offlineModelsEnv, startTestHost } from '../helpers/host.js';
import { query } from '../helpers/services.js';
import { readEvents, stream, tokensOf } from '../helpers/sse.js';

t.test('POST /stream on the offline provider: SSE shape, persistence, usage, routing record', async (t) => {
  const host = await startTestHost(t, { env: offlineModelsEnv('offline-general', 'offline-complex', 'offline-reasoning') });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Helper',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      system_prompt: 'Refunds are issued within 14 days.',
      message_type_response_config: {
        form: {
          enabled: true,
          response_text: 'Thanks, we got your form.',
          message_key_responses: [{ message_key: 'Opening Hours', response_text: 'We are open 9 to 5 on weekdays.' }],
        },
      },
    })
  ).body;

  t.test('a reply streams as token events with done last, and the turn is persisted', async (t) => {
    const { status, contentType, events } = await admin.stream({ thread_id: 'thread-1', agent_id: agent.agent_id, message: 'When are refunds issued?' });
    t.equal(status, 200);
    t.match(contentType, /^text\/event-stream/);
    t.match(events.at(-1), { type: 'done' }, 'done is the last event');
    t.ok(events.filter((e) => e.type === 'token').length > 1, 'several token events');
    t.equal(tokensOf(events), 'Refunds are issued within 14 days.', 'the offline model answers from its context');
    const [turn] = await query(host.databaseUrl, 'SELECT * FROM conversation_turns WHERE session_id = $1', ['thread-1']);
    t.same(
      [
        turn!.status,
        turn!.response_source,
        turn!.orchestrator_key,
        turn!.model_provider,
        turn!.model_name,
        turn!.token_usage_source,
        turn!.counts_toward_limits,
      ],
      ['completed', 'llm_generated', 'core_chat_v1', 'offline', 'offline-extractive', 'tokenizer_estimated', true],
    );
    t.ok(turn!.input_tokens > 0 && turn!.output_tokens > 0, 'tokens are estimated locally when the provider reports none');
    t.same(
      events.at(-1),
      {
        type: 'done',
        session_id: 'thread-1',
        turn_id: turn!.id,
        usage: {
          input_tokens: turn!.input_tokens,
          output_tokens: turn!.output_tokens,
          total_tokens: turn!.total_tokens,
          token_usage_source: 'tokenizer_estimated',
        },
      },
      "done names the session and turn it stored, with the turn's usage",
    );
    const messages = await query(host.databaseUrl, 'SELECT role, content FROM chat_messages WHERE session_id = $1 ORDER BY created_at', ['thread-1']);
    t.same(
      messages.map((m) => m.role),
      ['user', 'assistant'],
    );
    const [snapshot] = await query(host.databaseUrl, 'SELECT observability_schema_version, context FROM turn_context_snapshots WHERE turn_id = $1', [turn!.id]);
    t.equal(snapshot!.observability_schema_version, 'v2');
    for (const part of ['context_payload', 'rag_context', 'skill_context', 'mcp_context', 'turn', 'skill_calls', 'mcp_calls'])
      t.ok(part in snapshot!.context, `the context holds ${part}`);
    const routing = snapshot!.context.context_payload.model_routing;
    t.same([routing.route_mode, routing.explicit_override_active, routing.final_model_role], ['single', false, 'global_default']);
    t.same(routing.final_model_config, { model_name: 'offline-extractive', model_provider: 'offline', model_temperature: null });
    t.equal(snapshot!.context.turn.generation_usage.token_usage_source, 'tokenizer_estimated');
  });

  t.test('a fixed response: split on spaces, no model, persisted but not counted, override not written', async (t) => {
    const { events } = await admin.stream({
      thread_id: 'thread-2',
      agent_id: agent.agent_id,
      message: '  opening hours ',
      message_type: 'form',
      model_provider: 'offline',
      model_name: 'offline-extractive',
    });
    t.same(
      events.filter((e) => e.type === 'token').map((e) => e.content),
      ['We ', 'are ', 'open ', '9 ', 'to ', '5 ', 'on ', 'weekdays.'],
    );
    const [turn] = await query(host.databaseUrl, 'SELECT * FROM conversation_turns WHERE session_id = $1', ['thread-2']);
    t.match(
      events.at(-1),
      { type: 'done', session_id: 'thread-2', turn_id: turn!.id, usage: { total_tokens: 0, token_usage_source: 'no_model_invocation' } },
      'a fixed response names its turn too',
    );
    t.same(
      [turn!.response_source, turn!.token_usage_source, turn!.counts_toward_limits, turn!.model_name],
      ['fixed_response', 'no_model_invocation', false, null],
    );
    const [session] = await query(host.databaseUrl, 'SELECT model_provider FROM chat_sessions WHERE id = $1', ['thread-2']);
    t.equal(session!.model_provider, null, 'the request override is never written on the fixed-response path');
    const fallback = await admin.stream({ thread_id: 'thread-2', agent_id: agent.agent_id, message: 'anything else', message_type: 'form' });
    t.equal(tokensOf(fallback.events), 'Thanks, we got your form.', 'the enabled default answers other form messages');
  });

  t.test('unknown message_type becomes other and reaches the runtime with its tag', async (t) => {
    const { events } = await admin.stream({ thread_id: 'thread-3', message: 'zzz', message_type: 'sticker' });
    t.match(tokensOf(events), '"[message_type=other] zzz"', 'the model saw the tagged text');
    const [turn] = await query(host.databaseUrl, 'SELECT message_type FROM conversation_turns WHERE session_id = $1', ['thread-3']);
    t.equal(turn!.message_type, 'other');
  });

  t.test('bad requests are refused before the stream opens, with the error envelope and a 4xx', async (t) => {
    for (const [body, status, code, expected] of [
      [{ thread_id: 't-x', agent_id: '00000000-0000-0000-0000-000000000000', message: 'hi' }, 404, 'AGENT_NOT_FOUND', /agent .* not found/],
      [{ thread_id: 't-x', message: '   ' }, 422, 'MESSAGE_EMPTY', /message is empty/],
      [{ thread_id: 't-x', message: 'x'.repeat(8001) }, 422, 'MESSAGE_TOO_LONG', /the limit is 8000/],
      [{ thread_id: 't-x', message: 'hi', model_provider: 'nope' }, 422, 'UNKNOWN_MODEL', /unknown model_provider "nope"/],
    ] as const) {
      const refused = await admin.stream(body);
      t.match(
        refused,
        { status, contentType: /^application\/json/, body: { code, message: expected, request_id: String } },
        `${code}: ${status} before the stream`,
      );
    }
    const [opened] = await query(host.databaseUrl, 'SELECT count(*)::int AS n FROM chat_sessions WHERE id = $1', ['t-x']);
    t.equal(opened!.n, 0, 'a refused request opens no session');
    const malformed = await fetch(`${host.url}/stream`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"thread_id": ' });
    t.equal(malformed.status, 400, 'malformed JSON is a 400 before the stream');
    t.match(await malformed.json(), { detail: String, code: 'BAD_REQUEST', request_id: malformed.headers.get('x-request-id') });
    const missing = await admin.stream({ thread_id: 't-x' });
    t.equal(missing.status, 422, 'a body without message is a 422 before the stream');
  });

  t.test('admin_only agents need an administrator with conversations.write', async (t) => {
    const privateAgent = (await admin.request('POST', '/agents', { name: 'Internal', agent_type: 'chat' })).body;
    const anonymous = await stream(host.url, { agent_id: privateAgent.agent_id, message: 'hi' });
    t.match(anonymous, { status: 403, body: { code: 'AGENT_NOT_PUBLIC', detail: /only available to administrators with conversations.write/ } });
    const cookie = `agent_host_access=${admin.cookies.get('agent_host_access')!.value}`;
    const allowed = await stream(host.url, { thread_id: 'thread-4', agent_id: privateAgent.agent_id, message: 'hi' }, { cookie });
    t.equal(allowed.events.at(-1)!.type, 'done');
    t.notOk(
      allowed.events.some((e) => e.type === 'error'),
      'an administrator session with conversations.write is served',
    );
  });

  t.test('max_total_requests refuses further model turns, never fixed responses', async (t) => {
    const limited = (
      await admin.request('POST', '/agents', {
        name: 'Limited',
        agent_type: 'chat',
        public_access_mode: 'public_anonymous',
        max_total_requests: 1,
        message_type_response_config: { rule: { enabled: true, response_text: 'Rule noted.' } },
      })
    ).body;
    const first = await admin.stream({ thread_id: 'thread-5', agent_id: limited.agent_id, message: 'hello' });
    t.notOk(first.events.some((e) => e.type === 'error'));
    const fixed = await admin.stream({ thread_id: 'thread-5', agent_id: limited.agent_id, message: 'x', message_type: 'rule' });
    t.equal(tokensOf(fixed.events), 'Rule noted.', 'a fixed response is never blocked');
    const refused = await admin.stream({ thread_id: 'thread-5', agent_id: limited.agent_id, message: 'again' });
    t.same(
      refused.events.map((e) => e.type),
      ['error', 'done'],
    );
    t.match(refused.events[0]!.content, /max_total_requests limit \(1\)/);
    const fixedAgain = await admin.stream({ thread_id: 'thread-5', agent_id: limited.agent_id, message: 'y', message_type: 'rule' });
    t.equal(tokensOf(fixedAgain.events), 'Rule noted.', 'and not counted: still answered after the limit');
  });

  t.test('model resolution: explicit override collapses routing; routing slots and their fallback', async (t) => {
    const routed = (
      await admin.request('POST', '/agents', {
        name: 'Routed',
        agent_type: 'chat',
        public_access_mode: 'public_anonymous',
        model_provider: 'offline',
        model_name: 'offline-extractive',
        model_routing_config: { enabled: true, policy_version: 'p7', general_model: { model_provider: 'offline', model_name: 'offline-general' } },
      })
    ).body;
    await admin.stream({ thread_id: 'thread-6', agent_id: routed.agent_id, message: 'hi' });
    const routing = async (thread: string) =>
      (
        await query(
          host.databaseUrl,
          'SELECT s.context, t.model_name FROM turn_context_snapshots s JOIN conversation_turns t ON t.id = s.turn_id WHERE t.session_id = $1 ORDER BY t.created_at DESC LIMIT 1',
          [thread],
        )
      )[0]!;
    const r1 = await routing('thread-6');
    t.same(
      [
        r1.context.context_payload.model_routing.route_mode,
        r1.context.context_payload.model_routing.policy_version,
        r1.context.context_payload.model_routing.final_model_role,
        r1.model_name,
      ],
      ['routed', 'p7', 'general_model', 'offline-general'],
    );
    for (const override of [{ model_provider: 'offline', model_name: 'offline-override' }, { model_name: 'gpt-4o-mini' }]) {
      const refused = await admin.stream({ thread_id: 'thread-7', agent_id: routed.agent_id, message: 'hi', ...override });
      t.match(refused, { status: 422, body: { code: 'UNKNOWN_MODEL' } }, 'an override naming a model outside the catalog is refused');
      t.match(
        refused.body.detail,
        /unknown model "(offline-override" of model_provider "offline|gpt-4o-mini" of model_provider "offline)"; GET \/models lists the models/,
      );
    }
    t.same(await query(host.databaseUrl, 'SELECT model_name FROM chat_sessions WHERE id = $1', ['thread-7']), [], 'a refused override writes no session');
    await admin.stream({
      thread_id: 'thread-7',
      agent_id: routed.agent_id,
      message: 'hi',
      model_provider: 'offline',
      model_name: 'offline-extractive',
      model_temperature: 0.3,
    });
    const r2 = await routing('thread-7');
    const collapsed = r2.context.context_payload.model_routing;
    t.same([collapsed.route_mode, collapsed.explicit_override_active, r2.model_name], ['explicit_override', true, 'offline-extractive']);
    t.same(
      collapsed.stage_decisions.map((d: { stage: string; role: string }) => [d.stage, d.role]),
      [['final', 'explicit_override']],
      'the routing slots take no part',
    );
    const [session] = await query(host.databaseUrl, 'SELECT model_name, model_provider, model_temperature FROM chat_sessions WHERE id = $1', ['thread-7']);
    t.same(
      [session!.model_provider, session!.model_name, session!.model_temperature],
      ['offline', 'offline-extractive', 0.3],
      'a validated override is written to the session',
    );
    await admin.stream({ thread_id: 'thread-7', agent_id: routed.agent_id, message: 'again' });
    t.equal((await routing('thread-7')).model_name, 'offline-extractive', 'the session keeps its override on later turns (routing would pick offline-general)');
  });

  t.test('both routing flags false: the override keeps routing, an empty slot fails the turn with an error event, recorded', async (t) => {
    const strict = (
      await admin.request('POST', '/agents', {
        name: 'Strict routing',
        agent_type: 'chat',
        public_access_mode: 'public_anonymous',
        model_provider: 'offline',
        model_name: 'offline-extractive',
        model_routing_config: {
          enabled: true,
          collapse_to_explicit_override: false,
          fallback_to_primary_model: false,
          complex_task_model: { model_provider: 'offline', model_name: 'offline-complex' },
        },
      })
    ).body;
    const failed = await admin.stream({
      thread_id: 'thread-strict',
      agent_id: strict.agent_id,
      message: 'hi',
      model_provider: 'offline',
      model_name: 'offline-extractive',
    });
    t.same(
      failed.events.map((e) => e.type),
      ['error', 'done'],
      'no model for the final stage: an error, then done',
    );
    t.match(failed.events[0]!.content, /general_model is empty and fallback_to_primary_model is false/);
    const [row] = await query(
      host.databaseUrl,
      'SELECT s.context, t.status FROM turn_context_snapshots s JOIN conversation_turns t ON t.id = s.turn_id WHERE t.session_id = $1',
      ['thread-strict'],
    );
    t.equal(row!.status, 'failed');
    const routing = row!.context.context_payload.model_routing;
    t.match(
      routing,
      { route_mode: 'routed', explicit_override_active: true, collapse_to_explicit_override: false, fallback_to_primary_model: false },
      'the override did not collapse routing, and both flags are recorded',
    );
    t.match(routing.stage_decisions.at(-1), { stage: 'final', role: 'unresolved' }, 'the unresolved stage is in the turn context');
  });

  t.test('routing enabled: the final stage picks general, complex-task or reasoning model by the message, recorded with the reason', async (t) => {
    const routed = (
      await admin.request('POST', '/agents', {
        name: 'Three-way',
        agent_type: 'chat',
        public_access_mode: 'public_anonymous',
        model_provider: 'offline',
        model_name: 'offline-extractive',
        model_routing_config: {
          enabled: true,
          general_model: { model_provider: 'offline', model_name: 'offline-general' },
          complex_task_model: { model_provider: 'offline', model_name: 'offline-complex' },
          reasoning_model: { model_provider: 'offline', model_name: 'offline-reasoning', model_temperature: 0.1 },
        },
      })
    ).body;
    for (const [thread, message, role, model, reason] of [
      ['r-general', 'Where is my parcel', 'general_model', 'offline-general', 'short single request'],
      ['r-complex', 'Where is my parcel? When does it arrive?', 'complex_task_model', 'offline-complex', 'multi-part request (2 questions)'],
      ['r-reasoning', 'Please explain why the fee changed', 'reasoning_model', 'offline-reasoning', 'reasoning cue "explain why"'],
    ] as const) {
      await admin.stream({ thread_id: thread, agent_id: routed.agent_id, message });
      const [turn] = await query(
        host.databaseUrl,
        'SELECT t.model_name, s.context FROM conversation_turns t JOIN turn_context_snapshots s ON s.turn_id = t.id WHERE t.session_id = $1',
        [thread],
      );
      const record = turn!.context.context_payload.model_routing;
      t.equal(turn!.model_name, model, `${role}: the turn names the model that replied`);
      t.same(
        record.stage_decisions,
        [{ stage: 'final', model_name: model, model_provider: 'offline', model_temperature: role === 'reasoning_model' ? 0.1 : null, role, reason }],
        `${role}: the decision and its reason`,
      );
      t.equal(record.final_model_role, role);
    }
  });
});

t.test('POST /stream against an OpenAI-compatible model: provider usage, failures and client aborts', async (t) => {
  let chunkDelayMs = 0;
  let fail = false;
  const fixture = await startOpenAiFixture({
    respond: () =>
      fail
        ? { status: 500, error: { message: 'upstream exploded' } }
        : { chunks: ['Hello ', 'from ', 'the ', 'model.'], chunkDelayMs, usage: { prompt_tokens: 11, completion_tokens: 4 } },
  });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const body = { message: 'hi', model_provider: 'openai', model_name: 'gpt-4o-mini' };

  t.test('provider-reported usage and an estimated cost from the catalog prices', async (t) => {
    const { events } = await admin.stream({ ...body, thread_id: 'o-1' });
    t.equal(tokensOf(events), 'Hello from the model.');
    const [turn] = await query(host.databaseUrl, 'SELECT * FROM conversation_turns WHERE session_id = $1', ['o-1']);
    t.same([turn!.token_usage_source, turn!.input_tokens, turn!.output_tokens, turn!.total_tokens], ['provider_reported', 11, 4, 15]);
    t.equal(Number(turn!.estimated_cost_usd), Math.round(11 * 0.15 + 4 * 0.6) / 1e6, 'cost from the gpt-4o-mini prices');
  });

  t.test('a model failure gives an error event, done last, and a failed turn', async (t) => {
    fail = true;
    const { events } = await admin.stream({ ...body, thread_id: 'o-2' });
    fail = false;
    t.same(
      events.map((e) => e.type),
      ['error', 'done'],
    );
    t.match(events[0]!.content, /the model failed to answer/);
    const [turn] = await query(host.databaseUrl, 'SELECT status, error_message, response_source FROM conversation_turns WHERE session_id = $1', ['o-2']);
    t.same([turn!.status, turn!.response_source], ['failed', 'llm_generated'], 'a failed model turn keeps a spec response_source');
  });

  t.test('a client that disconnects mid-stream aborts the turn, which is still persisted', async (t) => {
    chunkDelayMs = 300;
    const controller = new AbortController();
    const response = await fetch(`${host.url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: admin.cookieHeader('/') },
      body: JSON.stringify({ ...body, thread_id: 'o-3' }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    t.match(first, /"type":"token"/);
    controller.abort();
    chunkDelayMs = 0;
    let turn: Record<string, unknown> | undefined;
    for (let i = 0; i < 50 && !turn; i++) {
      [turn] = await query(host.databaseUrl, 'SELECT status FROM conversation_turns WHERE session_id = $1', ['o-3']);
      if (!turn) await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(turn?.status, 'cancelled', 'a caller that leaves cancels its turn');
  });

  t.test('the SSE reader helper sees what a browser sees', async (t) => {
    const response = await fetch(`${host.url}/stream`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: admin.cookieHeader('/') },
      body: JSON.stringify({ ...body, thread_id: 'o-4' }),
    });
    const events = await readEvents(response);
    t.same(
      events.map((e) => e.type),
      ['token', 'token', 'token', 'token', 'done'],
    );
  });
});

t.test('max_concurrent_requests holds across two host instances sharing the database', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const fixture = await startOpenAiFixture({ respond: () => ({ chunks: ['slow ', 'reply'], beforeChunk: (index) => (index === 2 ? gate : undefined) }) }); // event 0 is the role chunk, 1 the first token
  t.teardown(() => fixture.close());
  const env = { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` };
  const a = await startTestHost(t, { env });
  const b = await startTestHost(t, { env, databaseUrl: a.databaseUrl });
  const admin = new AdminClient(a.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'One at a time',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      model_provider: 'openai',
      model_name: 'gpt-4o-mini',
      max_concurrent_requests: 1,
    })
  ).body;
  const held = fetch(`${a.url}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agent.agent_id, message: 'first' }),
  });
  const response = await held;
  const reader = response.body!.getReader();
  t.match(new TextDecoder().decode((await reader.read()).value), /"type":"token"/, 'instance A is mid-reply');
  const other = await stream(b.url, { agent_id: agent.agent_id, message: 'second' });
  t.same(
    other.events.map((e) => e.type),
    ['error', 'done'],
    'instance B refuses while A holds the only slot',
  );
  t.match(other.events[0]!.content, /already answering 1 requests/);
  release();
  while (!(await reader.read()).done);
  const after = await stream(b.url, { agent_id: agent.agent_id, message: 'third' });
  t.notOk(
    after.events.some((e) => e.type === 'error'),
    'once A finishes, B is served',
  );
});

t.test('model timeouts, the history bound and done after an abort', async (t) => {
  let slow: false | 'delay' | 'stall' = false;
  const fixture = await startOpenAiFixture({
    respond: () =>
      slow === 'delay'
        ? { chunks: ['too ', 'late'], delayMs: 4_000 }
        : slow === 'stall'
          ? { chunks: ['half ', 'an ', 'answer'], stallAfter: 3 }
          : { chunks: ['fine'] },
  });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, {
    env: {
      'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`,
      MODEL_REQUEST_TIMEOUT_SECONDS: '1',
      AGENT_HOST__AGENT__HISTORY_MESSAGE_LIMIT: '2',
    },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const body = { message: 'hi', model_provider: 'openai', model_name: 'gpt-4o-mini' };

  t.test('a model slower than timeouts.model_request_seconds: an error event, done last, a failed turn', async (t) => {
    slow = 'delay';
    const started = Date.now();
    const { events } = await admin.stream({ ...body, thread_id: 'slow-1' });
    slow = false;
    t.same(
      events.map((e) => e.type),
      ['error', 'done'],
    );
    t.match(events[0]!.content, /the model failed to answer/);
    t.ok(Date.now() - started < 3_500, 'the request gave up before the model answered');
    const [turn] = await query(host.databaseUrl, 'SELECT status, assistant_message_id FROM conversation_turns WHERE session_id = $1', ['slow-1']);
    t.same([turn!.status, turn!.assistant_message_id], ['failed', null]);
  });

  t.test('a model that stalls mid-stream: the tokens so far, then an error event and done; a failed turn', async (t) => {
    slow = 'stall';
    const started = Date.now();
    const { events } = await admin.stream({ ...body, thread_id: 'stall-1' });
    slow = false;
    t.ok(Date.now() - started < 5_000, `the turn gave up on the silent model (${Date.now() - started} ms)`);
    t.same(events.map((e) => e.type).slice(-2), ['error', 'done'], 'an error event, then done');
    t.ok(
      events.some((e) => e.type === 'token'),
      'after the tokens that did arrive',
    );
    const [turn] = await query(host.databaseUrl, 'SELECT status FROM conversation_turns WHERE session_id = $1', ['stall-1']);
    t.equal(turn!.status, 'failed', 'stored as failed');
  });

  t.test('core_chat_v1 sends at most history_message_limit earlier messages', async (t) => {
    for (const message of ['first question', 'second question', 'third question']) await admin.stream({ ...body, thread_id: 'bounded', message });
    const last = fixture.bodies.at(-1)!.messages as { role: string; content: string }[];
    t.same(
      last.map((m) => [m.role, m.content]),
      [
        ['user', 'second question'],
        ['assistant', 'fine'],
        ['user', 'third question'],
      ],
      'the two latest stored messages, then the new one',
    );
  });

  t.test('after the client aborts, the server-side stream still ends with done', async (t) => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    fixture.setRespond(() => ({ chunks: ['partial ', 'reply'], beforeChunk: (index) => (index === 2 ? held : undefined) }));
    const client = new AbortController();
    const events: { type: string }[] = [];
    const principal = await host.app.domains.adminAuth.authenticate(admin.cookies.get('agent_host_access')!.value);
    const admitted = await host.app.domains.chat.admit({ ...body, thread_id: 'abort-1' }, { principal, callerKey: null, channel: 'http' });
    for await (const event of host.app.domains.chat.stream(admitted, client.signal)) {
      events.push(event);
      if (event.type === 'token' && !client.signal.aborted) {
        client.abort();
        release();
      }
    }
    t.same(events.map((e) => e.type).at(-1), 'done', 'done is the last event');
    t.notOk(
      events.some((e) => e.type === 'error'),
      'a client that went away gets no error event',
    );
    const [turn] = await query(host.databaseUrl, 'SELECT status, error_message FROM conversation_turns WHERE session_id = $1', ['abort-1']);
    t.same([turn!.status, turn!.error_message], ['cancelled', 'client disconnected']);
  });
});
