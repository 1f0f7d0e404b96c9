// core_chat_v1 (CoreChatOrchestrator) run with a turn context built by test/helpers/turn-harness.ts: the offline
// provider, or openai against the fixture server, a retrieval handle with fixed chunks, a trace that records spans.
import t from 'tap';
import { runTurn } from '@agent-host/sdk/testing';
import type { ChatMessage, RetrievedChunk } from '@agent-host/sdk';
import { CoreChatOrchestrator } from '../src/lib/core-chat.js';
import { buildTurnContext, chunk, CHUNKS, fixture, offline, openaiAt, REFUNDS, SHIPPING, tokenText } from '../../../test/helpers/turn-harness.js';

// ---------------------------------------------------------------------------
// core_chat_v1

t.test('core_chat_v1 streams tokens whose concatenation equals the reply', async (tt) => {
  const harness = buildTurnContext({ provider: offline, message: 'When are refunds issued?', chunks: CHUNKS });
  const { events, result } = await runTurn(new CoreChatOrchestrator().run(harness.context));
  const tokens = tokenText(events);
  tt.ok(tokens.length > 1, 'the reply is streamed as several token events');
  tt.ok(
    events.every((e) => e.type === 'token'),
    'a successful turn streams only token events',
  );
  tt.equal(tokens.join(''), result.reply, 'the streamed tokens join to exactly the returned reply');
  tt.match(result.reply, REFUNDS, 'the (offline) model answers from the retrieved passage');
  tt.notMatch(result.reply, SHIPPING, 'the non-matching passage is not in the answer');
  tt.equal(result.response_source, 'llm_generated', 'the reply is marked as coming from the model');
  tt.equal(result.observation.rag_chunk_count, 2, 'the observation counts the retrieved chunks');
  tt.same(
    harness.modelCalls.map((c) => c.stage),
    ['final'],
    'core chat makes one model call, on the final stage core routes',
  );
});

t.test('core_chat_v1 puts the system prompt and the retrieved passages into the system message', async (tt) => {
  const history: ChatMessage[] = [
    { role: 'user', content: 'Hi there' },
    { role: 'assistant', content: 'Hello! How can I help?' },
  ];
  const harness = buildTurnContext({
    provider: offline,
    message: 'When are refunds issued?',
    agent: { system_prompt: 'You are the Acme help desk.' },
    history,
    chunks: CHUNKS,
  });
  await runTurn(new CoreChatOrchestrator().run(harness.context));

  tt.same(harness.searches, ['When are refunds issued?'], "retrieval searches the agent's sources with the user's message");
  const rag = harness.spans.find((s) => s.name === 'rag-retrieval');
  tt.ok(rag, 'retrieval runs inside a rag-retrieval span');
  tt.equal(rag?.attributes.chunk_count, 2, 'the span records how many chunks were retrieved');

  const messages = harness.modelCalls[0]?.messages ?? [];
  const [system] = messages;
  tt.equal(system?.role, 'system', 'the first message is the system message');
  tt.match(system?.content, 'You are the Acme help desk.', "the system message carries the agent's system prompt");
  tt.match(system?.content, REFUNDS, 'the system message carries the first retrieved passage');
  tt.match(system?.content, SHIPPING, 'the system message carries the second retrieved passage');
  tt.ok((system?.content.indexOf('Acme') ?? -1) < (system?.content.indexOf(REFUNDS) ?? -1), 'the system prompt comes before the passages');
  tt.match(system?.content, '[refund-policy.pdf]', 'with hide_rag_source_filename false, passages are labelled with their filename');
  tt.same(messages.slice(1, 3), history, 'the history follows the system message, oldest first');
  tt.same(messages.at(-1), { role: 'user', content: 'When are refunds issued?' }, "the user's message comes last");
  tt.equal(messages.length, 4, 'nothing else is sent');
});

t.test('core_chat_v1 labels published corrections and tells the model they take precedence', async (tt) => {
  const correction: RetrievedChunk = {
    ...chunk('Refunds are issued within 3 days.', 'correction-t1-r2.txt'),
    metadata: { document_origin: 'managed_correction' },
  };
  for (const hide of [false, true]) {
    const harness = buildTurnContext({
      provider: offline,
      message: 'When are refunds issued?',
      agent: { hide_rag_source_filename: hide },
      chunks: [correction, ...CHUNKS],
    });
    await runTurn(new CoreChatOrchestrator().run(harness.context));
    const system = harness.modelCalls[0]?.messages[0]?.content ?? '';
    tt.match(system, '[verified correction] Refunds are issued within 3 days.', `hide_rag_source_filename ${hide}: the correction is labelled as one`);
    tt.match(
      system,
      /marked \[?verified correction\]? are operators' corrections of earlier answers and take precedence/,
      'and the model is told what the label means',
    );
    tt.notMatch(system, 'correction-t1-r2.txt', 'its internal filename is never shown');
  }
  const plain = buildTurnContext({ provider: offline, message: 'When are refunds issued?', chunks: CHUNKS });
  await runTurn(new CoreChatOrchestrator().run(plain.context));
  tt.notMatch(plain.modelCalls[0]?.messages[0]?.content, 'verified correction', 'without a correction there is no such instruction');
});

t.test('core_chat_v1 hides filenames when hide_rag_source_filename is true', async (tt) => {
  const harness = buildTurnContext({
    provider: offline,
    message: 'When are refunds issued?',
    agent: { hide_rag_source_filename: true, system_prompt: 'Be brief.' },
    chunks: [...CHUNKS, chunk('Orders ship from Lyon.', null)],
  });
  const { result } = await runTurn(new CoreChatOrchestrator().run(harness.context));
  const system = harness.modelCalls[0]?.messages[0];
  tt.match(system?.content, REFUNDS, 'the passages are still in the system message');
  tt.match(system?.content, 'Orders ship from Lyon.', 'a passage without a filename is included too');
  tt.notMatch(system?.content, 'refund-policy.pdf', 'the first filename is hidden from the model');
  tt.notMatch(system?.content, 'shipping-guide.md', 'the second filename is hidden from the model');
  tt.notMatch(result.reply, /\.pdf|\.md/, 'no filename reaches the reply');
});

t.test('core_chat_v1 sends no system message when there is no prompt and nothing was retrieved', async (tt) => {
  const harness = buildTurnContext({ provider: offline, message: 'Which planet has rings?' });
  const { result } = await runTurn(new CoreChatOrchestrator().run(harness.context));
  tt.same(harness.modelCalls[0]?.messages, [{ role: 'user', content: 'Which planet has rings?' }], 'only the user message is sent');
  tt.match(result.reply, /no language model is configured/i, 'the offline model says plainly that it has no model');
  tt.equal(result.observation.rag_chunk_count, 0, 'zero chunks are recorded');
});

t.test('core_chat_v1 streams an OpenAI-compatible model token by token', async (tt) => {
  const server = await fixture(tt, () => ({ chunks: ['Refunds ', 'take ', 'up to ', '30 days.'], usage: { prompt_tokens: 40, completion_tokens: 6 } }));
  const harness = buildTurnContext({
    provider: await openaiAt(server),
    message: 'When are refunds issued?',
    agent: { system_prompt: 'Be brief.' },
    chunks: CHUNKS,
  });
  const { events, result } = await runTurn(new CoreChatOrchestrator().run(harness.context));
  tt.same(tokenText(events), ['Refunds ', 'take ', 'up to ', '30 days.'], 'each streamed delta becomes one token event, in order');
  tt.equal(result.reply, 'Refunds take up to 30 days.', 'the reply is the joined tokens (usage chunks are not text)');
  const system = server.bodies[0]?.messages?.[0];
  tt.equal(system?.role, 'system', 'the system message goes out first on the wire');
  tt.match(system?.content, REFUNDS, 'the retrieved passages go out in the system message');
  tt.equal(server.bodies[0]?.stream, true, 'the final model call is streamed');
  tt.equal(server.bodies[0]?.tools, undefined, 'core chat offers no tools on the final call');
});

t.test('core_chat_v1 with a grounding policy: passages, skill and tool results as numbered evidence; the grounded answer cited', async (tt) => {
  const harness = buildTurnContext({
    provider: offline,
    message: 'When are refunds issued?',
    agent: { system_prompt: 'You help with orders.' },
    chunks: CHUNKS,
    grounding: { enabled: true, mode: 'strict' },
    skills: { faq: { description: 'FAQ', input_schema: { type: 'object' }, run: async () => 'Open 9 to 5.' } },
    pipeline: {
      action: 'continue',
      tool_results: [{ tool_name: 'get_order', status: 'success', result: { status: 'shipped' } }],
      guidance: null,
      observation: {},
    },
  });
  const { events, result } = await runTurn(new CoreChatOrchestrator().run(harness.context));
  tt.equal(tokenText(events).join(''), result.reply);
  tt.match(result.reply, REFUNDS, 'the offline model answers from the matching passage');
  tt.notMatch(result.reply, /\[E\d\]/, 'without the evidence ids');
  tt.match(result.observation, { grounding_path: 'answer', rag_chunk_count: 2 });
  const system = harness.modelCalls[0]!.messages.filter((m) => m.role === 'system').map((m) => m.content);
  tt.equal(system[0], 'You help with orders.', "the agent's prompt comes first, without the passages");
  tt.match(
    system[1],
    /\[E1\] \(source: Handbook; file: [^)]+\) [\s\S]*\[E3\] \(tool result: get_order\) \{"status":"shipped"\}[\s\S]*\[E4\] \(skill result: faq\) Open 9 to 5\./,
  );
  const grounding = harness.context.grounding as unknown as { answers: { decision: { cited_ids: string[]; evidence_ids: string[] } }[] };
  tt.same(grounding.answers[0]!.decision.evidence_ids, ['E1', 'E2', 'E3', 'E4']);
  tt.ok(grounding.answers[0]!.decision.cited_ids.length > 0, 'the answer cites its passage');
});

t.test('core_chat_v1 with a grounding policy asks for a missing identifier without grounding', async (tt) => {
  const guidance = {
    kind: 'missing_arguments' as const,
    tool_name: 'get_order',
    missing_identifiers: ['order_id'],
    candidate_identifier_arguments: ['order_id'],
    candidate_identifiers: [],
    message: 'Ask the user for the order number.',
  };
  const harness = buildTurnContext({
    provider: offline,
    message: 'Where is my order?',
    grounding: { enabled: true, mode: 'strict' },
    pipeline: { action: 'continue', tool_results: [], guidance, observation: {} },
  });
  const { result } = await runTurn(new CoreChatOrchestrator().run(harness.context));
  tt.equal(result.observation.grounding_path, undefined, 'no grounding decision');
  tt.match(harness.modelCalls[0]!.messages[0]!.content, /Ask the user for the order number/, 'the model is told what to ask');
});
