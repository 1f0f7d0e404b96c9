// react_agent_v1 (ReactAgentOrchestrator, with its LangChain adapter SdkChatModel) run with a turn context built by
// test/helpers/turn-harness.ts: real model providers or scripted ones, real in-test tools and skills.
import t from 'tap';
import type { JSONSchema } from '@langchain/core/utils/json_schema';
import { tool } from 'langchain';
import { fakeScheduling, runTurn } from '@agent-host/sdk/testing';
import type { ChatCallOptions, ChatMessage, ChatStreamChunk, ModelProvider } from '@agent-host/sdk';
import { ReactAgentOrchestrator } from '../src/lib/react-agent.js';
import { SdkChatModel, toLangChainMessages, toSdkMessages } from '../src/lib/sdk-chat-model.js';
import { buildTurnContext, CHUNKS, fixture, offline, openaiAt, REFUNDS, SHIPPING, tokenText, type InTestTool } from '../../../test/helpers/turn-harness.js';

// ---------------------------------------------------------------------------
// react_agent_v1

const ORDERS: Record<string, { status: string; eta: string }> = { 'A-17': { status: 'shipped', eta: 'Monday' } };

const lookupOrder: InTestTool = {
  description: 'Look up an order by id',
  input_schema: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
  run(args) {
    const order = ORDERS[String(args.order_id)];
    if (!order) throw new Error(`no order ${String(args.order_id)}`);
    return { order_id: args.order_id, ...order };
  },
};

const hasToolResult = (body: any) => (body.messages as any[]).some((m) => m.role === 'tool');

t.test('react_agent_v1 calls the tool the model asks for and feeds the result back', async (tt) => {
  const server = await fixture(tt, (body) =>
    hasToolResult(body)
      ? { chunks: ['Order A-17 ', 'ships ', 'Monday.'] }
      : { tool_calls: [{ id: 'call_lookup_1', name: 'lookup_order', arguments: { order_id: 'A-17' } }] },
  );
  const harness = buildTurnContext({
    provider: await openaiAt(server),
    message: 'Where is order A-17?',
    agent: { system_prompt: 'You track orders.', orchestrator_key: 'react_agent_v1' },
    tools: { lookup_order: lookupOrder },
  });
  const { events, result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));

  tt.same(harness.toolCalls, [{ name: 'lookup_order', args: { order_id: 'A-17' } }], 'the tool the model asked for is called once, with its arguments');
  tt.equal(server.bodies.length, 2, 'the model is called again after the tool ran');

  const first = server.bodies[0];
  tt.same(
    first?.tools?.map((x: any) => x.function.name),
    ['search_knowledge', 'lookup_order'],
    "the first call offers search_knowledge and the agent's tools",
  );
  tt.same(first?.tools?.[1]?.function?.parameters, lookupOrder.input_schema, "a tool's input schema is offered as its parameters");
  tt.same(first?.messages?.[0], { role: 'system', content: 'You track orders.' }, 'the system prompt goes first');

  const second: any[] = server.bodies[1]?.messages ?? [];
  const assistant = second.find((m) => m.role === 'assistant');
  tt.equal(assistant?.tool_calls?.[0]?.id, 'call_lookup_1', "the second request repeats the model's tool call");
  tt.equal(assistant?.tool_calls?.[0]?.function?.name, 'lookup_order', 'the repeated call names the tool');
  const toolMessage = second.find((m) => m.role === 'tool');
  tt.equal(toolMessage?.tool_call_id, 'call_lookup_1', 'the tool message answers the call by id');
  tt.same(
    JSON.parse(toolMessage?.content ?? 'null'),
    { order_id: 'A-17', status: 'shipped', eta: 'Monday' },
    'the tool message carries the tool result as JSON',
  );
  tt.ok(second.indexOf(assistant) < second.indexOf(toolMessage), 'the tool result follows the call it answers');

  tt.equal(result.reply, 'Order A-17 ships Monday.', "the final answer is the model's reply after the tool result");
  tt.same(tokenText(events), ['Order A-17 ', 'ships ', 'Monday.'], 'each streamed delta becomes one token event, once and in order');
  tt.ok(
    server.bodies.every((b) => b.stream === true),
    'every model call is streamed',
  );
  tt.same(result.observation, { react_steps: 2, react_tool_calls: ['lookup_order'] }, 'the observation records the steps and the tools called');
  tt.same(
    harness.modelCalls.map((c) => c.stage),
    ['tool_call', 'final'],
    'the first step uses the tool_call model, later steps the final model core routes',
  );
  tt.ok(
    harness.spans.some((s) => s.name === 'react-tool-lookup_order'),
    'the tool call runs in a react-tool-<name> span',
  );
  tt.same(harness.searches, [], 'no retrieval happens unless the model asks for search_knowledge');
});

t.test('react_agent_v1 offers the mounted skills before the MCP tools and calls a skill through the skill handle', async (tt) => {
  const server = await fixture(tt, (body) =>
    hasToolResult(body) ? { chunks: ['Done.'] } : { tool_calls: [{ id: 'call_skill_1', name: 'lookup_order', arguments: { query: 'A-17' } }] },
  );
  const skill: InTestTool = {
    description: 'Order lookup skill',
    input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    run: () => ({ from: 'skill' }),
  };
  const harness = buildTurnContext({
    provider: await openaiAt(server),
    message: 'Where is order A-17?',
    agent: { orchestrator_key: 'react_agent_v1' },
    tools: { lookup_order: lookupOrder, other_tool: lookupOrder },
    skills: { lookup_order: skill },
  });
  await runTurn(new ReactAgentOrchestrator(5).run(harness.context));
  tt.same(
    server.bodies[0]?.tools?.map((x: any) => x.function.name),
    ['search_knowledge', 'lookup_order', 'other_tool'],
    'skills come before MCP tools, and a skill keeps a name a tool also has',
  );
  tt.same(server.bodies[0]?.tools?.[1]?.function?.description, 'Order lookup skill', 'the shared name is the skill');
  tt.same(harness.skillCalls, [{ name: 'lookup_order', args: { query: 'A-17' } }], 'the call goes to the skill handle');
  tt.same(harness.toolCalls, [], 'and not to the MCP tool handle');
  const toolMessage = (server.bodies[1]?.messages ?? []).find((m: { role: string }) => m.role === 'tool');
  tt.same(JSON.parse(toolMessage?.content ?? 'null'), { from: 'skill' }, "the skill's result is fed back to the model");
});

t.test('react_agent_v1 offers scheduling as tools where the turn may schedule, and schedules through the handle', async (tt) => {
  const runAt = '2026-12-01T09:00:00+01:00';
  const server = await fixture(tt, (body) =>
    hasToolResult(body)
      ? { content: 'Done: I will remind you on 1 December at 9:00.' }
      : { tool_calls: [{ id: 'call_s', name: 'schedule_task', arguments: { schedule: { kind: 'once', run_at: runAt }, message: 'Call Ana' } }] },
  );
  const scheduling = fakeScheduling();
  const harness = buildTurnContext({ provider: await openaiAt(server), message: 'Remind me on 1 December at 9 to call Ana', scheduling });
  const { result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));
  tt.same(
    server.bodies[0]?.tools?.map((x: any) => x.function.name),
    ['search_knowledge', 'schedule_task', 'list_scheduled_tasks', 'cancel_scheduled_task'],
    'the scheduling tools are offered',
  );
  tt.same(scheduling.requests, [{ schedule: { kind: 'once', run_at: runAt }, message: 'Call Ana' }], 'the task was made through the handle');
  const toolMessage = (server.bodies[1]?.messages ?? []).find((m: { role: string }) => m.role === 'tool');
  tt.match(JSON.parse(toolMessage?.content ?? 'null'), { status: 'done', task: { message: 'Call Ana' } }, "core's outcome is fed back to the model");
  tt.match(result.reply, 'Done');
});

t.test('react_agent_v1 feeds a failing tool back as an error result', async (tt) => {
  const server = await fixture(tt, (body) =>
    hasToolResult(body)
      ? { content: 'I could not find that order.' }
      : { tool_calls: [{ id: 'call_x', name: 'lookup_order', arguments: { order_id: 'Z-99' } }] },
  );
  const harness = buildTurnContext({ provider: await openaiAt(server), message: 'Where is order Z-99?', tools: { lookup_order: lookupOrder } });
  const { result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));
  const toolMessage = (server.bodies[1]?.messages as any[] | undefined)?.find((m) => m.role === 'tool');
  tt.same(JSON.parse(toolMessage?.content ?? 'null'), { status: 'error', error: 'no order Z-99' }, 'a failed tool call is fed back as {status, error}');
  tt.equal(result.reply, 'I could not find that order.', 'the model still gets to answer');
});

t.test('react_agent_v1 stops after max_steps', async (tt) => {
  // A model that keeps asking for the tool while it is offered, and answers when it is not.
  const server = await fixture(tt, (body) =>
    body.tools ? { tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A-17' } }] } : { content: 'Order A-17 has shipped.' },
  );
  const harness = buildTurnContext({ provider: await openaiAt(server), message: 'Where is A-17?', tools: { lookup_order: lookupOrder } });
  const { result } = await runTurn(new ReactAgentOrchestrator(3).run(harness.context));
  tt.equal(server.bodies.length, 3, 'the model is called exactly max_steps times');
  tt.same(
    server.bodies.map((b) => Array.isArray(b.tools)),
    [true, true, false],
    'tools are offered on every step but the last, so the model must answer',
  );
  tt.equal(harness.toolCalls.length, 2, 'the tool ran once per step that offered it');
  tt.equal(result.reply, 'Order A-17 has shipped.', 'the answer of the last step is the reply');
  tt.equal(result.observation.react_steps, 3, 'the observation records max_steps steps');

  // A model that asks for tools even when none are offered.
  const stubborn = await fixture(tt, () => ({ content: 'Let me check again.', tool_calls: [{ name: 'lookup_order', arguments: { order_id: 'A-17' } }] }));
  const second = buildTurnContext({ provider: await openaiAt(stubborn), message: 'Where is A-17?', tools: { lookup_order: lookupOrder } });
  const { result: stopped } = await runTurn(new ReactAgentOrchestrator(2).run(second.context));
  tt.equal(stubborn.bodies.length, 2, 'a model that never stops asking for tools is still called only max_steps times');
  tt.equal(second.toolCalls.length, 1, 'a tool call made on the last step, where no tools were offered, is not run');
  tt.equal(stopped.observation.react_steps, 2, 'the turn ends at max_steps');
  tt.same(stopped.observation.react_tool_calls, ['lookup_order'], 'only the tool calls that ran are recorded');
});

t.test('react_agent_v1 uses search_knowledge for retrieval', async (tt) => {
  const server = await fixture(tt, (body) =>
    hasToolResult(body)
      ? { content: 'Refunds are issued within 30 days.' }
      : { tool_calls: [{ id: 'call_search_1', name: 'search_knowledge', arguments: { query: 'refund window' } }] },
  );
  const harness = buildTurnContext({
    provider: await openaiAt(server),
    message: 'How long do refunds take?',
    chunks: CHUNKS,
    tools: { lookup_order: lookupOrder },
  });
  const { result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));
  tt.same(harness.searches, ['refund window'], 'search_knowledge runs a retrieval with the query the model chose');
  tt.same(harness.toolCalls, [], 'search_knowledge is answered by the retrieval handle, not the tool handle');
  const toolMessage = (server.bodies[1]?.messages as any[] | undefined)?.find((m) => m.role === 'tool');
  tt.equal(toolMessage?.tool_call_id, 'call_search_1', 'the retrieval result answers the search_knowledge call');
  tt.equal(toolMessage?.content, `${REFUNDS}\n\n${SHIPPING}`, 'the retrieved passages are fed back to the model');
  tt.ok(
    harness.spans.some((s) => s.name === 'react-tool-search_knowledge'),
    'the retrieval runs in a react-tool-search_knowledge span',
  );
  tt.same(result.observation.react_tool_calls, ['search_knowledge'], 'the observation records the search_knowledge call');
  tt.equal(result.reply, 'Refunds are issued within 30 days.', 'the model answers after reading the passages');

  const empty = await fixture(tt, (body) =>
    hasToolResult(body) ? { content: 'Nothing found.' } : { tool_calls: [{ name: 'search_knowledge', arguments: { query: 'warranty' } }] },
  );
  const none = buildTurnContext({ provider: await openaiAt(empty), message: 'Warranty?', chunks: [] });
  await runTurn(new ReactAgentOrchestrator(5).run(none.context));
  const emptyResult = (empty.bodies[1]?.messages as any[] | undefined)?.find((m) => m.role === 'tool');
  tt.equal(emptyResult?.content, 'no matching passages', 'an empty retrieval is reported to the model as no matching passages');
});

t.test('react_agent_v1 answers in one step when the model calls no tool', async (tt) => {
  const harness = buildTurnContext({
    provider: offline,
    message: 'When are refunds issued?',
    agent: { system_prompt: REFUNDS },
  });
  const { events, result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));
  tt.equal(harness.modelCalls.length, 1, 'one model call');
  tt.same(harness.modelCalls[0]?.toolNames, ['search_knowledge'], 'search_knowledge is offered even when the agent has no tools');
  tt.equal(result.reply, REFUNDS, 'the reply is the model answer');
  tt.equal(tokenText(events).join(''), result.reply, 'the streamed tokens join to the reply');
  tt.same(result.observation, { react_steps: 1, react_tool_calls: [] }, 'one step, no tool calls');
});

// ---------------------------------------------------------------------------
// react_agent_v1 on LangChain's agent loop, with scripted models

/** One scripted model call: what it was sent, and the chunks it answers with. */
type Script = (messages: ChatMessage[], options: ChatCallOptions | undefined) => AsyncIterable<ChatStreamChunk>;

/** A provider whose models answer every call by `script`; the agent only streams, so `invoke` is refused. */
const scripted = (script: Script): ModelProvider => ({
  displayName: 'Scripted',
  offline: false,
  createChatModel: (spec) => ({
    provider: 'scripted',
    modelName: spec.model_name,
    stream: script,
    invoke: async () => {
      throw new Error('the agent loop streams every model call');
    },
  }),
});

const toolResults = (messages: ChatMessage[]) => messages.filter((m) => m.role === 'tool');

t.test('react_agent_v1 streams each token to the caller as the model produces it', async (tt) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const harness = buildTurnContext({
    provider: scripted(async function* () {
      yield { type: 'token', content: 'Parcels ' };
      await released; // the rest of the answer waits until the caller has seen the first token
      yield { type: 'token', content: 'ship ' };
      yield { type: 'token', content: 'in two days.' };
    }),
    message: 'When do parcels ship?',
  });
  const run = new ReactAgentOrchestrator(5).run(harness.context);
  let timer: NodeJS.Timeout | undefined;
  const first = await Promise.race([run.next(), new Promise<'held back'>((resolve) => (timer = setTimeout(() => resolve('held back'), 2_000)))]);
  clearTimeout(timer);
  tt.same(first, { done: false, value: { type: 'token', content: 'Parcels ' } }, 'the first token reaches the caller while the model is still answering');
  release();
  const { events, result } = await runTurn(run);
  tt.same(tokenText(events), ['ship ', 'in two days.'], 'the later tokens follow in order, each once');
  tt.equal(result.reply, 'Parcels ship in two days.', 'the reply is the whole answer');
  tt.same(result.observation, { react_steps: 1, react_tool_calls: [] }, 'one step, no tool calls');
});

t.test('react_agent_v1 sees the user messages of history_user_message_window, not the whole conversation', async (tt) => {
  const conversation: ChatMessage[] = [
    { role: 'user', content: 'Where is A-17?' },
    { role: 'assistant', content: 'A-17 ships Monday. Shall I check C-3 as well?' },
    { role: 'user', content: 'No thanks' },
  ];
  const answering = scripted(async function* () {
    yield { type: 'token', content: 'Checking.' };
  });
  const windowed = buildTurnContext({
    provider: answering,
    message: 'And B-2?',
    agent: { system_prompt: 'You track orders.' },
    history: conversation,
    recentUserMessages: ['Where is A-17?', 'No thanks'],
  });
  await runTurn(new ReactAgentOrchestrator(5).run(windowed.context));
  tt.same(
    windowed.modelCalls[0]?.messages,
    [
      { role: 'system', content: 'You track orders.' },
      { role: 'user', content: 'Where is A-17?' },
      { role: 'user', content: 'No thanks' },
      { role: 'user', content: 'And B-2?' },
    ],
    "the loop that picks tools and their arguments gets the window's user messages, and no assistant text to take identifiers from",
  );
  const none = buildTurnContext({ provider: answering, message: 'And B-2?', history: conversation, recentUserMessages: [] });
  await runTurn(new ReactAgentOrchestrator(5).run(none.context));
  tt.same(none.modelCalls[0]?.messages, [{ role: 'user', content: 'And B-2?' }], 'a window of 0 leaves the current message only');
});

t.test('react_agent_v1 ends with an empty reply when the model answers nothing', async (tt) => {
  const harness = buildTurnContext({ provider: scripted(async function* () {}), message: 'Anything?' });
  const { events, result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));
  tt.same(events, [], 'no token is streamed');
  tt.same([result.reply, result.observation.react_steps], ['', 1], 'the reply is empty after one step');
});

t.test('react_agent_v1 runs the tool calls of one step through the tool handle and sends every result back', async (tt) => {
  const harness = buildTurnContext({
    provider: scripted(async function* (messages, options) {
      if (toolResults(messages).length === 0) {
        tt.same(
          options?.tools?.map((x) => x.name),
          ['search_knowledge', 'lookup_order'],
          'the model is offered search_knowledge and the agent tools',
        );
        yield { type: 'token', content: 'Checking both. ' };
        yield { type: 'tool_call', call: { id: 'call_a', name: 'lookup_order', arguments: { order_id: 'A-17' } } };
        yield { type: 'tool_call', call: { id: 'call_b', name: 'lookup_order', arguments: { order_id: 'B-2' } } };
        yield { type: 'usage', usage: { input_tokens: 30, output_tokens: 12 } };
      } else {
        yield { type: 'token', content: 'A-17 ships Monday; B-2 is unknown.' };
      }
    }),
    message: 'Where are A-17 and B-2?',
    tools: { lookup_order: lookupOrder },
  });
  const { events, result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));

  tt.same(
    harness.toolCalls,
    [
      { name: 'lookup_order', args: { order_id: 'A-17' } },
      { name: 'lookup_order', args: { order_id: 'B-2' } },
    ],
    'each call goes to context.tools.call with the arguments the model chose',
  );
  const second = harness.modelCalls[1]?.messages ?? [];
  tt.same(
    second.find((m) => m.role === 'assistant'),
    {
      role: 'assistant',
      content: 'Checking both. ',
      tool_calls: [
        { id: 'call_a', name: 'lookup_order', arguments: { order_id: 'A-17' } },
        { id: 'call_b', name: 'lookup_order', arguments: { order_id: 'B-2' } },
      ],
    },
    "the next model call repeats the model's text and both calls",
  );
  tt.same(
    toolResults(second).map((m) => [m.tool_call_id, JSON.parse(m.content)]),
    [
      ['call_a', { order_id: 'A-17', status: 'shipped', eta: 'Monday' }],
      ['call_b', { status: 'error', error: 'no order B-2' }],
    ],
    'each result reaches the next model call as a tool message answering its call',
  );
  tt.same(tokenText(events), ['Checking both. ', 'A-17 ships Monday; B-2 is unknown.'], 'the text of every step is streamed, in order');
  tt.equal(result.reply, 'Checking both. A-17 ships Monday; B-2 is unknown.', 'the reply is exactly the text the user saw streamed');
  tt.same(result.observation, { react_steps: 2, react_tool_calls: ['lookup_order', 'lookup_order'] }, 'both calls are recorded');
  tt.same(
    harness.spans.map((s) => s.name),
    ['react-tool-lookup_order', 'react-tool-lookup_order'],
    'each call runs in its own span',
  );
});

t.test('react_agent_v1 answers search_knowledge from the retrieval handle and reports tool failures to the model', async (tt) => {
  const harness = buildTurnContext({
    provider: scripted(async function* (messages) {
      const results = toolResults(messages);
      if (results.length === 0) yield { type: 'tool_call', call: { id: 'call_s', name: 'search_knowledge', arguments: { query: 'refund window' } } };
      else if (results.length === 1) yield { type: 'tool_call', call: { id: 'call_bad', name: 'lookup_order', arguments: { order: 7 } } };
      else yield { type: 'token', content: 'Refunds take 30 days.' };
    }),
    message: 'How long do refunds take?',
    chunks: CHUNKS,
    tools: { lookup_order: lookupOrder },
  });
  const { result } = await runTurn(new ReactAgentOrchestrator(5).run(harness.context));
  tt.same(harness.searches, ['refund window'], 'search_knowledge searches with the query the model chose');
  const [passages, refused] = toolResults(harness.modelCalls[2]?.messages ?? []);
  tt.equal(passages?.content, `${REFUNDS}\n\n${SHIPPING}`, 'the passages reach the model as the search_knowledge result');
  tt.equal(refused?.tool_call_id, 'call_bad', 'a call whose arguments break the input schema is still answered');
  tt.match(refused?.content, /did not match expected schema/, 'with an error the model can correct');
  tt.same(harness.toolCalls, [], 'such a call never reaches the tool handle');
  tt.equal(result.reply, 'Refunds take 30 days.', 'the model answers after both results');
  tt.equal(result.observation.react_steps, 3, 'three steps');
});

t.test('react_agent_v1 stops when the turn is aborted', async (tt) => {
  const controller = new AbortController();
  let seen: AbortSignal | undefined;
  const harness = buildTurnContext({
    provider: scripted(async function* (_messages, options) {
      seen = options?.signal;
      yield { type: 'token', content: 'Let me ' };
      await new Promise((_resolve, reject) => options?.signal?.addEventListener('abort', () => reject(options.signal?.reason)));
      yield { type: 'tool_call', call: { id: 'call_late', name: 'lookup_order', arguments: { order_id: 'A-17' } } };
    }),
    message: 'Where is A-17?',
    tools: { lookup_order: lookupOrder },
  });
  harness.context.signal = controller.signal;
  const run = new ReactAgentOrchestrator(5).run(harness.context);
  tt.same((await run.next()).value, { type: 'token', content: 'Let me ' }, 'the turn is streaming');
  controller.abort(new Error('client disconnected'));
  await tt.rejects(run.next(), 'the run ends with an error once the turn is aborted');
  tt.ok(seen?.aborted, "the model's call received the turn's abort signal");
  tt.equal(harness.modelCalls.length, 1, 'no further model call is made');
  tt.same(harness.toolCalls, [], 'no tool runs');
});

t.test('react_agent_v1 holds the largest max_steps: tools on every step but the last', async (tt) => {
  const harness = buildTurnContext({
    provider: scripted(async function* (_messages, options) {
      yield { type: 'token', content: options?.tools ? 'Checking. ' : 'A-17 has shipped.' };
      yield { type: 'tool_call', call: { id: `call_${harness.modelCalls.length}`, name: 'lookup_order', arguments: { order_id: 'A-17' } } };
    }),
    message: 'Where is A-17?',
    tools: { lookup_order: lookupOrder },
  });
  const { events, result } = await runTurn(new ReactAgentOrchestrator(20).run(harness.context));
  tt.equal(harness.modelCalls.length, 20, 'the model is called max_steps times');
  tt.same(
    harness.modelCalls.map((c) => c.toolNames === undefined),
    [...Array(19).fill(false), true],
    'the last call is offered no tools',
  );
  tt.equal(harness.toolCalls.length, 19, 'the call the model makes on the last step anyway is not run');
  tt.ok(result.reply.endsWith('Checking. A-17 has shipped.'), 'the last step ends the reply');
  tt.equal(result.reply, tokenText(events).join(''), 'the reply is every step streamed');
  tt.equal(result.observation.react_steps, 20, 'the observation records max_steps steps');
});

// ---------------------------------------------------------------------------

// SdkChatModel: an SDK ChatModel as a LangChain chat model

t.test('SdkChatModel maps messages both ways and turns bound LangChain tools into SDK tool specs', async (tt) => {
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Where is A-17?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', name: 'lookup_order', arguments: { order_id: 'A-17' } }] },
    { role: 'tool', content: '{"status":"shipped"}', tool_call_id: 'call_1' },
  ];
  tt.same(toSdkMessages(toLangChainMessages(conversation)), conversation, 'SDK messages survive a round trip through LangChain messages');

  let sent: { messages: ChatMessage[]; options: ChatCallOptions | undefined } | undefined;
  const model = new SdkChatModel({
    provider: 'scripted',
    modelName: 'm',
    stream: () => {
      throw new Error('invoke does not stream');
    },
    async invoke(messages, options) {
      sent = { messages, options };
      return {
        content: 'On its way.',
        tool_calls: [{ id: 'call_2', name: 'lookup_order', arguments: { order_id: 'B-2' } }],
        usage: { input_tokens: 9, output_tokens: 4 },
      };
    },
  });
  const lookup = tool(async () => '', { name: 'lookup_order', description: 'Look up an order by id', schema: lookupOrder.input_schema as JSONSchema });
  const answer = await model.bindTools([lookup]).invoke(toLangChainMessages(conversation));
  tt.same(sent?.messages, conversation, 'the SDK model receives the conversation');
  tt.same(
    sent?.options?.tools,
    [{ name: 'lookup_order', description: 'Look up an order by id', parameters: lookupOrder.input_schema }],
    'the bound tool is offered with its JSON schema',
  );
  tt.equal(answer.text, 'On its way.', "the answer's text comes back");
  tt.same(
    answer.tool_calls?.map((c) => [c.id, c.name, c.args]),
    [['call_2', 'lookup_order', { order_id: 'B-2' }]],
    "the answer's tool calls come back",
  );
  tt.same([answer.usage_metadata?.input_tokens, answer.usage_metadata?.output_tokens], [9, 4], 'the reported usage comes back');
});
