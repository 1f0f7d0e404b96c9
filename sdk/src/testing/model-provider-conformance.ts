import type { ChatMessage, ChatModelSpec, ChatStreamChunk, ModelProvider } from '../extensions/models.js';
import { abortedSignal, conformanceRule, rejectionOf, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'model provider';
const QUESTION: ChatMessage[] = [
  { role: 'system', content: 'You answer in one short sentence.' },
  { role: 'user', content: 'When do parcels ship?' },
];

async function gather(stream: AsyncIterable<ChatStreamChunk>): Promise<ChatStreamChunk[]> {
  const chunks: ChatStreamChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

const countsOk = (usage: { input_tokens: number; output_tokens: number }) =>
  [usage.input_tokens, usage.output_tokens].every((n) => Number.isInteger(n) && n >= 0);

/**
 * What every {@link ModelProvider} must do with a model its backend answers (`spec`): name itself and say whether it
 * is offline, build a chat model of the spec's name, stream an answer as tokens (usage, when reported, as
 * non-negative counts), answer the same through `invoke`, refuse an aborted caller in both, and say whether a spec is
 * available with a reason when it is not.
 * @public
 */
export function modelProviderConformance(provider: ModelProvider, spec: ChatModelSpec): ConformanceRule[] {
  return [
    conformanceRule(SUITE, 'it names itself and says whether it is offline', async (fail: Fail) => {
      if (typeof provider.displayName !== 'string' || provider.displayName.trim() === '') fail(`displayName is ${JSON.stringify(provider.displayName)}`);
      if (typeof provider.offline !== 'boolean') fail(`offline is ${JSON.stringify(provider.offline)}, not a boolean`);
    }),
    conformanceRule(SUITE, "createChatModel() builds a model of the spec's name", async (fail: Fail) => {
      const model = provider.createChatModel(spec);
      if (model.modelName !== spec.model_name) fail(`modelName is ${JSON.stringify(model.modelName)}, not ${JSON.stringify(spec.model_name)}`);
      if (typeof model.provider !== 'string' || model.provider === '') fail(`provider is ${JSON.stringify(model.provider)}`);
    }),
    conformanceRule(SUITE, 'stream() gives the answer as tokens, and usage as non-negative counts', async (fail: Fail) => {
      const chunks = await gather(provider.createChatModel(spec).stream(QUESTION));
      const tokens = chunks.flatMap((chunk) => (chunk.type === 'token' ? [chunk.content] : []));
      if (tokens.join('').trim() === '') fail(`no text was streamed: ${JSON.stringify(chunks).slice(0, 200)}`);
      for (const chunk of chunks) if (chunk.type === 'usage' && !countsOk(chunk.usage)) fail(`a usage chunk holds ${JSON.stringify(chunk.usage)}`);
    }),
    conformanceRule(SUITE, 'invoke() gives the whole answer and its tool calls', async (fail: Fail) => {
      const completion = await provider.createChatModel(spec).invoke(QUESTION);
      if (typeof completion.content !== 'string' || completion.content.trim() === '') fail(`content is ${JSON.stringify(completion.content)}`);
      if (!Array.isArray(completion.tool_calls)) fail(`tool_calls is ${JSON.stringify(completion.tool_calls)}, not a list`);
      if (completion.usage && !countsOk(completion.usage)) fail(`usage is ${JSON.stringify(completion.usage)}`);
    }),
    conformanceRule(SUITE, 'stream() and invoke() with an aborted signal reject', async (fail: Fail) => {
      const model = provider.createChatModel(spec);
      if ((await rejectionOf(gather(model.stream(QUESTION, { signal: abortedSignal() })))) === undefined) fail('stream() answered a caller that had gone');
      if ((await rejectionOf(model.invoke(QUESTION, { signal: abortedSignal() }))) === undefined) fail('invoke() answered a caller that had gone');
    }),
    conformanceRule(SUITE, 'availability(), when present, answers available or a reason', async (fail: Fail) => {
      if (!provider.availability) return;
      const answer = provider.availability(spec);
      if (answer.available === true) return;
      if (answer.available !== false || typeof answer.reason !== 'string' || answer.reason === '') fail(`availability() gave ${JSON.stringify(answer)}`);
    }),
  ];
}
