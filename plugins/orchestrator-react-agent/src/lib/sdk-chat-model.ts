import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import { BaseChatModel, type BaseChatModelCallOptions, type BindToolsInput } from '@langchain/core/language_models/chat_models';
import {
  AIMessage,
  AIMessageChunk,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  coerceMessageLikeToMessage,
  type BaseMessage,
  type UsageMetadata,
} from '@langchain/core/messages';
import { ChatGenerationChunk, type ChatResult } from '@langchain/core/outputs';
import type { Runnable } from '@langchain/core/runnables';
import { AsyncLocalStorageProviderSingleton } from '@langchain/core/singletons';
import { convertToOpenAITool } from '@langchain/core/utils/function_calling';
import type { ChatCallOptions, ChatMessage, ChatModel, ChatStreamChunk, ProviderUsage, ToolCallRequest, ToolSpec } from '@agent-host/sdk';

/** Call options of {@link SdkChatModel}: the tools `bindTools` bound, as SDK tool specs. */
export interface SdkChatModelCallOptions extends BaseChatModelCallOptions {
  tools?: ToolSpec[];
}

/** SDK messages to LangChain messages (LangChain reads the SDK shape but for the tool calls' `args`). */
export const toLangChainMessages = (messages: readonly ChatMessage[]): BaseMessage[] =>
  messages.map(({ tool_calls, ...m }) => coerceMessageLikeToMessage({ ...m, ...(tool_calls && { tool_calls: tool_calls.map(toLangChainToolCall) }) }));

/** LangChain messages to SDK messages. */
export function toSdkMessages(messages: readonly BaseMessage[]): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    if (SystemMessage.isInstance(m)) return { role: 'system', content: m.text };
    if (HumanMessage.isInstance(m)) return { role: 'user', content: m.text };
    if (ToolMessage.isInstance(m)) return { role: 'tool', content: m.text, tool_call_id: m.tool_call_id };
    if (AIMessage.isInstance(m)) {
      const calls = (m.tool_calls ?? []).map((c, i): ToolCallRequest => ({ id: c.id ?? `call_${i}`, name: c.name, arguments: c.args }));
      return { role: 'assistant', content: m.text, ...(calls.length > 0 && { tool_calls: calls }) };
    }
    throw new Error(`a ${m.type} message cannot be sent to an agent-host chat model`);
  });
}

const toLangChainToolCall = (c: ToolCallRequest) => ({ id: c.id, name: c.name, args: c.arguments, type: 'tool_call' as const });

const usageMetadata = (u: ProviderUsage): UsageMetadata => ({
  input_tokens: u.input_tokens,
  output_tokens: u.output_tokens,
  total_tokens: u.input_tokens + u.output_tokens,
});

/**
 * Runs `fn` outside LangChain's run context. What core hands a turn (a model,
 * a tool handle) may be built on LangChain itself; inside the agent's context
 * its own runs would report to the agent's callbacks, and their tokens would
 * reach the agent's token stream.
 */
export const detached = <T>(fn: () => T): T => AsyncLocalStorageProviderSingleton.getInstance().run(undefined, fn);

/** An SDK stream whose every step runs {@link detached}. */
async function* detachedStream<T>(stream: () => AsyncIterable<T>): AsyncGenerator<T> {
  const iterator = detached(() => stream()[Symbol.asyncIterator]());
  try {
    for (let next = await detached(() => iterator.next()); !next.done; next = await detached(() => iterator.next())) yield next.value;
  } finally {
    await detached(async () => iterator.return?.());
  }
}

/** A LangChain tool (or tool definition) as the SDK tool spec the model is offered. */
function toToolSpec(tool: BindToolsInput): ToolSpec {
  const { function: fn } = convertToOpenAITool(tool);
  return { name: fn.name, description: fn.description ?? '', parameters: fn.parameters as ToolSpec['parameters'] };
}

/**
 * A LangChain chat model over an SDK `ChatModel`, so LangChain's agent loop can
 * drive the models core hands a turn: every call goes through the SDK model,
 * where core routes it and records its usage. Bound tools are passed as SDK
 * tool specs, and the caller's abort signal reaches the SDK model.
 */
export class SdkChatModel extends BaseChatModel<SdkChatModelCallOptions> {
  constructor(private readonly sdkModel: ChatModel) {
    super({});
  }

  // Called by LangChain's constructor, before `sdkModel` is set.
  _llmType(): string {
    return 'agent-host';
  }

  override bindTools(tools: BindToolsInput[]): Runnable<BaseLanguageModelInput, AIMessageChunk, SdkChatModelCallOptions> {
    return this.withConfig({ tools: tools.map(toToolSpec) });
  }

  private callOptions(options: this['ParsedCallOptions']): ChatCallOptions {
    return { ...(options.signal && { signal: options.signal }), ...(options.tools?.length && { tools: options.tools }) };
  }

  async _generate(messages: BaseMessage[], options: this['ParsedCallOptions']): Promise<ChatResult> {
    const completion = await detached(() => this.sdkModel.invoke(toSdkMessages(messages), this.callOptions(options)));
    const message = new AIMessage({
      content: completion.content,
      tool_calls: completion.tool_calls.map(toLangChainToolCall),
      ...(completion.usage && { usage_metadata: usageMetadata(completion.usage) }),
    });
    return { generations: [{ text: completion.content, message }] };
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: this['ParsedCallOptions'],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    let calls = 0;
    let empty = true;
    const toChunk = (chunk: ChatStreamChunk): AIMessageChunk => {
      switch (chunk.type) {
        case 'token':
          return new AIMessageChunk({ content: chunk.content });
        case 'tool_call': {
          const { id, name, arguments: args } = chunk.call;
          // Each call its own index, so LangChain's chunk merging keeps the calls apart.
          return new AIMessageChunk({ content: '', tool_call_chunks: [{ type: 'tool_call_chunk', id, name, args: JSON.stringify(args), index: calls++ }] });
        }
        case 'usage':
          return new AIMessageChunk({ content: '', usage_metadata: usageMetadata(chunk.usage) });
      }
    };
    for await (const chunk of detachedStream(() => this.sdkModel.stream(toSdkMessages(messages), this.callOptions(options)))) {
      const generation = new ChatGenerationChunk({ text: chunk.type === 'token' ? chunk.content : '', message: toChunk(chunk) });
      empty = false;
      yield generation;
      await runManager?.handleLLMNewToken(generation.text, undefined, undefined, undefined, undefined, { chunk: generation });
    }
    // LangChain refuses a stream without chunks; an empty answer is still an answer.
    if (empty) yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '' }) });
  }
}
