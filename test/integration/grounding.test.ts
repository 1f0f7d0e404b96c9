// Grounded answers (issue 20): response_grounding_config validated on write; a strict agent on the offline model
// answers from an uploaded document with its citations in the turn context, the reply's metadata and the WebSocket
// message, and refuses a question the document does not cover; over a real OpenAI wire protocol, a hallucinated
// citation is retried, invalid JSON falls back to text, and a handoff flags the session for operators.
import t from 'tap';
import { DEFAULT_GROUNDING_TEXTS } from '@agent-host/sdk';
import { startOpenAiFixture, type FixtureReply } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, ingest, uploadOk } from '../helpers/knowledge.js';
import { tokensOf } from '../helpers/sse.js';
import { WsClient } from '../helpers/ws.js';

const RETURNS = 'Returns are accepted within 30 days of delivery when the item is unused.\n\nRefunds reach the original card within five working days.';
const json = (value: unknown): FixtureReply => ({ chunks: JSON.stringify(value).match(/.{1,7}/gs)! });

t.test('grounded agents', async (t) => {
  let script: FixtureReply[] = [];
  const fixture = await startOpenAiFixture({ respond: () => script.shift() ?? { content: 'ok' } });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { name: 'Shop policies' });
  const document = await uploadOk(admin, source.source_id, { filename: 'returns.txt', contentType: 'text/plain', data: RETURNS });
  await ingest(admin, source.source_id);
  const agentWith = async (config: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const created = await admin.request('POST', '/agents', { name: 'Shop help', agent_type: 'chat', response_grounding_config: config, ...extra });
    t.equal(created.status, 201, JSON.stringify(created.body));
    await admin.request('POST', `/agents/${created.body.agent_id}/mounts`, { source_id: source.source_id });
    return created.body as { agent_id: string; response_grounding_config: Record<string, unknown> };
  };
  let thread = 0;
  const ask = async (agentId: string, message: string, model: Record<string, string> = {}) => {
    const threadId = `grounded-${++thread}`;
    const { events } = await admin.stream({ thread_id: threadId, agent_id: agentId, message, ...model });
    const [turn] = (await admin.request('GET', `/sessions/${threadId}/turns`)).body.items;
    const context = (await admin.request('GET', `/sessions/${threadId}/turns/${turn.turn_id}/context`)).body;
    const messages = (await admin.request('GET', `/sessions/${threadId}/messages`)).body.items;
    return { threadId, events, reply: tokensOf(events), turn, grounding: context.context_payload.grounding, replyMessage: messages.at(-1) };
  };

  await t.test('the policy is validated on write, with a 422 naming the field, and stored with its defaults', async (t) => {
    const refused = async (body: Record<string, unknown>, field: string) => {
      const response = await admin.request('POST', '/agents', { name: 'Bad', agent_type: 'chat', ...body });
      t.equal(response.status, 422, JSON.stringify(body));
      t.ok(
        response.body.detail.some((d: { loc: string[] }) => d.loc.join('.').startsWith(field)),
        `${field} is named: ${JSON.stringify(response.body.detail)}`,
      );
    };
    await refused({ response_grounding_config: { enabled: true, mode: 'loose' } }, 'body.response_grounding_config.mode');
    await refused({ response_grounding_config: { enabled: true, policy_version: 'v9' } }, 'body.response_grounding_config.policy_version');
    await refused({ response_grounding_config: { enabled: true, low_confidence_behavior: 'shrug' } }, 'body.response_grounding_config.low_confidence_behavior');
    await refused(
      { response_grounding_config: { enabled: true, mode: 'strict', allow_general_knowledge: true } },
      'body.response_grounding_config.allow_general_knowledge',
    );
    await refused({ response_grounding_config: { enabled: true, low_confidence_behavior: 'handoff' } }, 'body.response_grounding_config');
    await refused({ agent_type: 'etl', response_grounding_config: { enabled: true } }, 'body.response_grounding_config');
    const agent = await agentWith({ enabled: true, mode: 'strict' });
    t.same(agent.response_grounding_config, {
      enabled: true,
      policy_version: 'v1',
      mode: 'strict',
      allow_general_knowledge: false,
      low_confidence_behavior: 'refuse',
      structured_output_failure_behavior: 'retry_once',
    });
    const versions = await admin.request('POST', `/agents/${agent.agent_id}/versions`, {});
    t.match(versions.body, { snapshot: { response_grounding_config: { mode: 'strict' } } }, 'a version snapshot holds the policy');
  });

  await t.test('offline model: a strict agent answers from the document with citations, and refuses what it does not cover', async (t) => {
    const agent = await agentWith({ enabled: true, mode: 'strict' });
    const answered = await ask(agent.agent_id, 'How many days do I have for returns of an unused item?');
    t.match(answered.reply, /Returns are accepted within 30 days/);
    t.match(answered.grounding, {
      policy: { mode: 'strict' },
      path: 'answer',
      grounded: true,
      cited_ids: ['E1'],
      failures: [],
      citations: [{ evidence_id: 'E1', kind: 'chunk', source_name: 'Shop policies', document_id: document.document_id, document_filename: 'returns.txt' }],
    });
    t.type(answered.grounding.citations[0].score, 'number');
    t.match(answered.grounding.citations[0].text, /Returns are accepted/);
    t.equal(answered.turn.response_source, 'llm_generated');
    t.match(answered.replyMessage.metadata, { grounding_path: 'answer', citations: [{ evidence_id: 'E1', document_id: document.document_id }] });
    t.same(
      answered.events.map((e) => e.type).filter((type, i, all) => all.indexOf(type) === i),
      ['token', 'done'],
      'SSE keeps its event types',
    );

    const uncovered = await ask(agent.agent_id, 'What is the capital city of Peru?');
    t.equal(uncovered.reply, DEFAULT_GROUNDING_TEXTS.refuse);
    t.match(uncovered.grounding, { path: 'low_confidence_refuse', grounded: false, cited_ids: [] });
    t.match(uncovered.grounding.low_confidence_reason, /^(no_evidence|not_grounded)$/);
    t.equal(uncovered.turn.response_source, 'grounding_low_confidence');

    // A rule message (a scheduled reminder, an automation) asks the agent to act: it runs without the policy.
    const { events } = await admin.stream({
      thread_id: 'grounded-rule',
      agent_id: agent.agent_id,
      message: 'What is the capital city of Peru?',
      message_type: 'rule',
    });
    t.not(tokensOf(events), DEFAULT_GROUNDING_TEXTS.refuse);
    const [ruleTurn] = (await admin.request('GET', '/sessions/grounded-rule/turns')).body.items;
    const ruleContext = (await admin.request('GET', `/sessions/grounded-rule/turns/${ruleTurn.turn_id}/context`)).body;
    t.equal(ruleContext.context_payload.grounding, null, 'no grounding decision for a rule message');
    t.equal(ruleTurn.response_source, 'llm_generated');
  });

  await t.test('hide_rag_source_filename hides the filename from the model and the message, never from the turn context', async (t) => {
    const agent = await agentWith({ enabled: true, mode: 'strict' }, { hide_rag_source_filename: true, model_provider: 'openai', model_name: 'gpt-4o-mini' });
    script = [json({ grounded: true, confidence: 0.8, citations: ['E1'], answer: 'Thirty days.' })];
    const seen = fixture.requests.length;
    const answered = await ask(agent.agent_id, 'How many days do I have for returns?');
    t.equal(answered.reply, 'Thirty days.');
    const request = fixture.requests[seen]!.body;
    t.notMatch(JSON.stringify(request.messages), 'returns.txt', 'the model does not see the filename');
    t.match(request.response_format, { type: 'json_schema', json_schema: { name: 'grounded_answer' } }, 'structured output is asked for');
    t.equal(answered.grounding.citations[0].document_filename, 'returns.txt');
    t.equal(answered.replyMessage.metadata.citations[0].document_filename, null);
  });

  await t.test('OpenAI wire protocol: hallucinated citations retried once, invalid JSON as fallback text, then refused', async (t) => {
    const openai = { model_provider: 'openai', model_name: 'gpt-4o-mini' };
    const retrying = await agentWith({ enabled: true, mode: 'strict' }, openai);
    script = [
      json({ grounded: true, confidence: 0.9, citations: ['E1', 'E42'], answer: 'Ninety days.' }),
      json({ grounded: true, confidence: 0.9, citations: ['E1'], answer: 'Thirty days from delivery.' }),
    ];
    const retried = await ask(retrying.agent_id, 'How long do returns take?');
    t.equal(retried.reply, 'Thirty days from delivery.');
    t.match(retried.grounding, { path: 'answer', failures: ['unknown_citations: E42'], model_calls: 2 });

    script = [{ content: 'This is not JSON at all.' }, { content: 'Still not JSON.' }];
    const refused = await ask(retrying.agent_id, 'How long do returns take?');
    t.equal(refused.reply, DEFAULT_GROUNDING_TEXTS.refuse);
    t.match(refused.grounding, { path: 'failure_refuse', failures: ['invalid_json', 'invalid_json'] });
    t.equal(refused.turn.response_source, 'grounding_refusal');

    const fallback = await agentWith({ enabled: true, structured_output_failure_behavior: 'fallback_text' }, openai);
    script = [{ content: 'Returns take thirty days.' }];
    const plain = await ask(fallback.agent_id, 'How long do returns take?');
    t.equal(plain.reply, 'Returns take thirty days.');
    t.match(plain.grounding, { path: 'failure_fallback_text', failures: ['invalid_json'] });

    const general = await agentWith({ enabled: true, mode: 'balanced', allow_general_knowledge: true }, openai);
    script = [json({ grounded: false, confidence: 0.3, citations: [], answer: 'Lima is the capital of Peru.' })];
    const known = await ask(general.agent_id, 'What is the capital city of Peru?');
    t.equal(known.reply, 'Lima is the capital of Peru.');
    t.match(known.grounding, { path: 'general_knowledge', general_knowledge: true });
  });

  await t.test('handoff: the reply says a person follows up and operators are told over WebSocket; the session stays AI_ACTIVE', async (t) => {
    const agent = await agentWith(
      { enabled: true, mode: 'strict', low_confidence_behavior: 'handoff' },
      { human_takeover_enabled: true, public_access_mode: 'public_anonymous' },
    );
    await admin.stream({ thread_id: 'handoff-1', agent_id: agent.agent_id, message: 'Hello' });
    const me = (await admin.request('GET', '/admin/auth/me')).body;
    const operator = await WsClient.connect(host.url, '/ws/handoff-1', {
      cookie: admin.cookieHeader(),
      query: { role: 'operator', operator_id: me.admin_user_id, operator_name: 'Ops' },
    });
    t.teardown(() => operator.socket.close());
    const { events } = await admin.stream({ thread_id: 'handoff-1', agent_id: agent.agent_id, message: 'Can I pay with gold bars?' });
    t.equal(tokensOf(events), DEFAULT_GROUNDING_TEXTS.handoff);
    const flagged = await operator.waitFor('handoff_requested');
    t.match(flagged, { session_id: 'handoff-1', handoff: { reason: /^(no_evidence|not_grounded)$/ } });
    const reply = await operator.waitFor('message', ({ message }) => message.role === 'assistant' && message.content === DEFAULT_GROUNDING_TEXTS.handoff);
    t.equal(reply.message.metadata.grounding_path, 'low_confidence_handoff');
    t.equal(flagged.handoff.message_id, reply.message.message_id);
    t.notOk(
      operator.received.some((r) => r.type === 'session' && (r.payload as { status: string }).status === 'HUMAN_ACTIVE'),
      'the session is not taken over',
    );

    const listed = async () =>
      ((await admin.request('GET', `/sessions?agent_id=${agent.agent_id}`)).body.items as { session_id: string; handoff_requested_at: string | null }[]).find(
        (s) => s.session_id === 'handoff-1',
      )!.handoff_requested_at;
    t.equal(await listed(), reply.message.created_at, 'the sessions list flags the session with the time of the reply that asked for a person');
    t.equal((await admin.request('POST', '/sessions/handoff-1/takeover', {})).status, 200);
    t.equal(await listed(), null, 'an operator taking it over clears the flag');
    t.equal((await admin.request('POST', '/sessions/handoff-1/release', {})).status, 200);
    t.equal(await listed(), null, 'and it stays clear once handed back, until the agent asks again');
  });
});
