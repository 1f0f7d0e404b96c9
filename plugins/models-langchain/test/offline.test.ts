// The `offline` model provider of plugins/models-langchain: deterministic,
// answers from its context, calls no model.
import t from 'tap';
import type { ChatMessage, ChatModel, ChatModelSpec, ChatStreamChunk } from '@agent-host/sdk';
import { OfflineModelProvider, offlineAnswer } from '../src/lib/offline-provider.js';
import { providersFromPlugin } from '../../../test/helpers/model-provider.js';

const spec = (model_name = 'offline-default'): ChatModelSpec => ({ model_name, temperature: null, timeoutMs: 1_000, options: {} });
const model = (name?: string): ChatModel => new OfflineModelProvider().createChatModel(spec(name));

async function collect(stream: AsyncIterable<ChatStreamChunk>): Promise<ChatStreamChunk[]> {
  const chunks: ChatStreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const REFUNDS = 'Refunds are issued within 30 days of purchase.';
const SHIPPING = 'Shipping takes five business days.';
const SUPPORT = 'Support is reachable by email around the clock.';

const conversation = (question: string, context = [REFUNDS, SHIPPING, SUPPORT].join('\n\n')): ChatMessage[] => [
  { role: 'system', content: context },
  { role: 'user', content: question },
];

t.test('the offline provider reports offline = true and its identity', async (tt) => {
  const provider = new OfflineModelProvider();
  tt.equal(provider.offline, true, 'the offline provider is flagged offline (so /models labels it)');
  const m = provider.createChatModel(spec('offline-small'));
  tt.equal(m.provider, 'offline', 'its models report provider offline');
  tt.equal(m.modelName, 'offline-small', 'its models keep the catalog model name');

  const registered = await providersFromPlugin({});
  tt.equal(registered.get('offline')?.offline, true, 'the plugin registers model_provider "offline" as an offline provider');
  tt.equal(registered.get('openai')?.offline, false, 'the openai provider is not offline');
});

t.test('the offline model is deterministic: same input, same output', async (tt) => {
  const messages = conversation('When are refunds issued?');
  const first = await model().invoke(messages);
  const again = await model().invoke(structuredClone(messages));
  const otherInstance = await new OfflineModelProvider().createChatModel(spec('another-name')).invoke(structuredClone(messages));
  tt.same(again, first, 'invoking twice with the same messages gives the same completion');
  tt.same(otherInstance, first, 'a separately created model gives the same completion');
  const streamedA = await collect(model().stream(messages));
  const streamedB = await collect(model().stream(messages));
  tt.same(streamedB, streamedA, 'streaming twice yields the same chunks');

  const other = await model().invoke(conversation('How long does shipping take?'));
  tt.not(other.content, first.content, 'a different question gets a different answer (the output depends on the input)');
});

t.test('the offline model answers with the context passages that match the question', async (tt) => {
  const refunds = await model().invoke(conversation('When are refunds issued?'));
  tt.equal(refunds.content, REFUNDS, 'the one matching passage is the answer, verbatim');
  tt.notMatch(refunds.content, /Shipping|Support/, 'passages that do not match are left out');
  tt.same(refunds.tool_calls, [], 'the offline model never calls tools');
  tt.notOk('usage' in refunds, 'the offline model reports no usage (core estimates it)');

  const shipping = await model().invoke(conversation('How long does shipping take?'));
  tt.equal(shipping.content, SHIPPING, 'another question picks its own passage');

  const both = await model().invoke(conversation('Shipping and refunds: how many days?'));
  tt.equal(both.content, `${REFUNDS}\n\n${SHIPPING}`, 'several matching passages are all returned, in context order');

  const many = [
    'Apples grow on trees.',
    'Apples and pears ripen in autumn.',
    'Bananas are yellow.',
    'Pears and apples keep in cold storage.',
    'Apples are red or green.',
  ];
  const best = await model().invoke(conversation('Do apples and pears ripen in cold storage?', many.join('\n\n')));
  tt.equal(
    best.content,
    [many[0], many[1], many[3]].join('\n\n'),
    'at most three passages are returned: the best-matching ones, ties broken by context order, shown in context order',
  );

  const fromTool = await model().invoke([
    { role: 'user', content: 'Which warehouse holds order 77?' },
    { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'lookup', arguments: {} }] },
    { role: 'tool', content: 'Order 77 sits in the Rotterdam warehouse.', tool_call_id: 'c1' },
    { role: 'user', content: 'Which warehouse holds order 77?' },
  ]);
  tt.equal(fromTool.content, 'Order 77 sits in the Rotterdam warehouse.', 'tool results count as context passages');

  const latest = await model().invoke([
    { role: 'system', content: [REFUNDS, SHIPPING].join('\n\n') },
    { role: 'user', content: 'When are refunds issued?' },
    { role: 'assistant', content: REFUNDS },
    { role: 'user', content: 'And how long does shipping take?' },
  ]);
  tt.equal(latest.content, SHIPPING, 'the latest user message is the question');

  const listed = await model().invoke(conversation('Where is the office?', 'Opening hours:\n- Office hours are 9 to 5.\n- The office is in Lyon.'));
  tt.match(listed.content, 'The office is in Lyon.', 'list items are passages of their own');
  tt.notMatch(listed.content, 'Opening hours', 'a non-matching line of the same block is left out');
});

t.test('the offline model says plainly that no language model is configured when nothing matches', async (tt) => {
  const question = 'Which planet has rings?';
  const answer = await model().invoke(conversation(question));
  tt.match(answer.content, /no language model is configured/i, 'the answer states that no language model is configured');
  tt.match(answer.content, question, 'the answer repeats the question it could not match');
  tt.notMatch(answer.content, /Refunds|Shipping|Support/, 'no unrelated passage is offered as an answer');

  const noContext = await model().invoke([{ role: 'user', content: 'Tell me about refunds.' }]);
  tt.match(noContext.content, /no language model is configured/i, 'with no context at all it says so too');
});

t.test('offline stream tokens join to the invoke() answer', async (tt) => {
  for (const question of ['When are refunds issued?', 'Shipping and refunds: how many days?', 'Which planet has rings?']) {
    const messages = conversation(question);
    const chunks = await collect(model().stream(messages));
    const { content } = await model().invoke(messages);
    tt.ok(
      chunks.every((c) => c.type === 'token'),
      `only token chunks are streamed (no tool calls, no usage): ${question}`,
    );
    const tokens = chunks.map((c) => (c.type === 'token' ? c.content : ''));
    tt.equal(tokens.join(''), content, `the streamed tokens join to exactly the invoke() answer: ${question}`);
    tt.ok(tokens.length > 1, `the answer is streamed in several tokens, not one block: ${question}`);
  }
});

t.test('the offline model honours an aborted signal', async (tt) => {
  const controller = new AbortController();
  controller.abort();
  await tt.rejects(
    model().invoke(conversation('When are refunds issued?'), { signal: controller.signal }),
    { name: 'AbortError' },
    'invoke rejects when the signal is aborted',
  );

  const live = new AbortController();
  const tokens: string[] = [];
  const stopped = (async () => {
    for await (const chunk of model().stream(conversation('When are refunds issued?'), { signal: live.signal })) {
      if (chunk.type === 'token') tokens.push(chunk.content);
      live.abort();
    }
  })();
  await tt.rejects(stopped, { name: 'AbortError' }, 'stream rejects once the signal aborts');
  tt.equal(tokens.length, 1, 'no token is streamed after the abort');
});

t.test('sharing only function words does not make a passage relevant', async (t) => {
  const answer = offlineAnswer([
    { role: 'system', content: 'You are the Acme help desk.\n\nRefunds are issued within 14 days.' },
    { role: 'user', content: 'When are refunds issued?' },
  ]);
  t.equal(answer, 'Refunds are issued within 14 days.', 'the agent prompt is not quoted back just for sharing "you/are/the"');
});
