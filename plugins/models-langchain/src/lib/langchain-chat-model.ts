// The part every LangChain-backed provider (openai, anthropic, ollama) shares:
// message conversion, tool binding, the streaming loop, tool-call and usage
// extraction, one deadline for the whole request, and the mapping of failures
// to UpstreamTimeoutError / UpstreamError. A provider only says how to build its
// LangChain chat model and how it asks for structured output.
import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import { BaseChatModel, type BaseChatModelCallOptions } from '@langchain/core/language_models/chat_models';
import type { AIMessageChunk } from '@langchain/core/messages';
import type { Runnable } from '@langchain/core/runnables';
import {
  callDeadline,
  UpstreamError,
  UpstreamTimeoutError,
  type ChatCallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatModel,
  type ChatModelSpec,
  type ChatStreamChunk,
  type HttpClient,
  type JsonSchema,
  type Logger,
  type ModelKeySource,
  type ProviderUsage,
  type ToolCallRequest,
} from '@agent-host/sdk';
import { textOf, toLangChain } from './langchain-messages.js';

/** A LangChain chat model, possibly with tools or call options bound. */
type ChatRunnable<CallOptions extends BaseChatModelCallOptions = BaseChatModelCallOptions> = Runnable<BaseLanguageModelInput, AIMessageChunk, CallOptions>;

/** The structured-output request of one call. */
export type ResponseSchema = NonNullable<ChatCallOptions['responseSchema']>;

export const toolCallsOf = (message: AIMessageChunk): ToolCallRequest[] =>
  (message.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.name, arguments: c.args as Record<string, unknown> }));

/**
 * The usage the server reported, or `undefined` when it reported none (LangChain
 * leaves an empty `usage_metadata` object on invoke when the response carries
 * no `usage`; LangChain drops zero counts, so a missing count is zero).
 */
export function usageOf(message: AIMessageChunk): ProviderUsage | undefined {
  const usage = message.usage_metadata;
  const input = usage?.input_tokens;
  const output = usage?.output_tokens;
  if (typeof input !== 'number' && typeof output !== 'number') return undefined;
  return { input_tokens: input ?? 0, output_tokens: output ?? 0 };
}

/** A tool spec in the OpenAI function format, which every LangChain integration's `bindTools` accepts. */
const functionTool = (t: NonNullable<ChatCallOptions['tools']>[number]) => ({
  type: 'function' as const,
  function: { name: t.name, description: t.description, parameters: t.parameters as Record<string, unknown> },
});

export const jsonSchemaOf = (schema: JsonSchema) => schema as Record<string, unknown>;

/**
 * A `ChatModel` over a LangChain chat model. `stream` yields each text delta as
 * it arrives, then the tool calls and the usage of the whole answer; `invoke`
 * returns the whole answer. Both run under one deadline (`spec.timeoutMs`) that
 * bounds the whole request, streaming included, joined with the caller's signal.
 */
export abstract class LangChainChatModel<CallOptions extends BaseChatModelCallOptions = BaseChatModelCallOptions> implements ChatModel {
  abstract readonly provider: string;
  readonly modelName: string;
  private readonly timeoutMs: number;

  constructor(
    spec: ChatModelSpec,
    private readonly log: Logger,
  ) {
    this.modelName = spec.model_name;
    this.timeoutMs = spec.timeoutMs;
  }

  /**
   * The LangChain chat model for one call. `signal` aborts the call (the caller's
   * signal joined with the deadline); providers whose client takes no per-request
   * signal use it to drop the HTTP request.
   */
  protected abstract chatModel(signal: AbortSignal): BaseChatModel<CallOptions, AIMessageChunk>;

  /** The call options that ask for JSON output matching `schema`, the provider's native way. */
  protected abstract responseSchemaOptions(schema: ResponseSchema): Partial<CallOptions>;

  /**
   * The usage of a whole answer, `undefined` when the server reported none.
   * `usageChunks` (streaming only) are the chunks that carried usage, in order,
   * for providers whose streamed counts are not plain increments.
   */
  protected usage(message: AIMessageChunk, _usageChunks?: readonly AIMessageChunk[]): ProviderUsage | undefined {
    return usageOf(message);
  }

  private runnable(client: BaseChatModel<CallOptions, AIMessageChunk>, options?: ChatCallOptions): ChatRunnable<CallOptions> {
    let model: ChatRunnable<CallOptions> = client;
    if (options?.tools?.length) {
      if (!client.bindTools) throw new Error(`model provider ${this.provider} cannot bind tools`);
      model = client.bindTools(options.tools.map(functionTool));
    }
    if (options?.responseSchema) model = model.withConfig(this.responseSchemaOptions(options.responseSchema));
    return model;
  }

  /**
   * The answer's chunks as the client streams them. A call without tools reads
   * the client's own chunk stream, a response schema given as call options:
   * LangChain's `stream()` wraps every chunk in callback, tracing-context and
   * merging work the host does not use, and that cost about a fifth of a short
   * turn's CPU (bench/stream). Calls with tools go through the runnable
   * LangChain composes.
   */
  private async *chunks(messages: ChatMessage[], signal: AbortSignal, options?: ChatCallOptions): AsyncGenerator<AIMessageChunk> {
    const client = this.chatModel(signal);
    const input = toLangChain(messages);
    if (options?.tools?.length || client._streamResponseChunks === BaseChatModel.prototype._streamResponseChunks) {
      yield* await this.runnable(client, options).stream(input, { signal } as Partial<CallOptions>);
      return;
    }
    // What `stream()` also does: an aborted call sends nothing, and as clients may end an aborted stream quietly,
    // the signal is checked with each chunk and at the end; generation info is part of the response metadata.
    signal.throwIfAborted();
    const callOptions = { signal, ...(options?.responseSchema && this.responseSchemaOptions(options.responseSchema)) };
    for await (const generation of client._streamResponseChunks(input, callOptions as BaseChatModel<CallOptions, AIMessageChunk>['ParsedCallOptions'])) {
      signal.throwIfAborted();
      const message = generation.message as AIMessageChunk;
      message.response_metadata = { ...generation.generationInfo, ...message.response_metadata };
      yield message;
    }
    signal.throwIfAborted();
  }

  async *stream(messages: ChatMessage[], options?: ChatCallOptions): AsyncIterable<ChatStreamChunk> {
    let merged: AIMessageChunk | undefined;
    const usageChunks: AIMessageChunk[] = [];
    // One deadline for the whole request, streaming included, joined with the caller's signal.
    const deadline = callDeadline(this.timeoutMs, options?.signal);
    try {
      for await (const chunk of this.chunks(messages, deadline.signal, options)) {
        // Only tool-call and usage chunks are needed afterwards; text goes out as it comes, unmerged.
        if (chunk.tool_call_chunks?.length || chunk.usage_metadata) merged = merged ? merged.concat(chunk) : chunk;
        if (chunk.usage_metadata) usageChunks.push(chunk);
        const text = textOf(chunk.content);
        if (text) yield { type: 'token', content: text };
      }
    } catch (error) {
      throw this.mapError(error, options, deadline.timedOut);
    } finally {
      deadline.dispose();
    }
    if (!merged) return;
    for (const call of toolCallsOf(merged)) yield { type: 'tool_call', call };
    const usage = this.usage(merged, usageChunks);
    if (usage) yield { type: 'usage', usage };
  }

  async invoke(messages: ChatMessage[], options?: ChatCallOptions): Promise<ChatCompletion> {
    const deadline = callDeadline(this.timeoutMs, options?.signal);
    const signal = deadline.signal;
    try {
      const message = await this.runnable(this.chatModel(signal), options).invoke(toLangChain(messages), { signal } as Partial<CallOptions>);
      const usage = this.usage(message);
      return { content: textOf(message.content), tool_calls: toolCallsOf(message), ...(usage && { usage }) };
    } catch (error) {
      throw this.mapError(error, options, deadline.timedOut);
    } finally {
      deadline.dispose();
    }
  }

  private mapError(error: unknown, options: ChatCallOptions | undefined, timedOut: boolean): unknown {
    const signal = options?.signal;
    if (signal?.aborted) return error;
    const message = (error as Error).message ?? String(error);
    if (timedOut || (error as Error).name?.includes('Timeout') || /timed? ?out/i.test(message)) {
      return new UpstreamTimeoutError(`model ${this.modelName} did not answer in time`);
    }
    (options?.log ?? this.log).warn({ provider: this.provider, model: this.modelName, err: message }, 'model request failed');
    return new UpstreamError(`model ${this.modelName} request failed: ${message}`, { cause: error });
  }
}

/**
 * `fetch` for a provider SDK, through the host's HTTP client without its default deadline: the SDK's `timeout` and
 * the turn's signal bound each call. The SDKs (OpenAI, Anthropic, ollama-js) call it with a URL string.
 */
export function sdkFetch(http: HttpClient): typeof fetch {
  return ((url: string | URL, init?: RequestInit) => http.fetch(url, { ...init, timeoutMs: Infinity })) as typeof fetch;
}

/** What a LangChain-backed provider is built with: its default base URL, its API key source, a logger. */
export interface LangChainProviderOptions extends ModelKeySource {
  baseUrl: string;
  /** The host's HTTP client (`coreServices.http`): the provider SDKs fetch through it, with their own deadlines. */
  http: HttpClient;
}

/** A catalog entry's `options.base_url` wins over the provider's default. */
export function baseUrlOf(spec: ChatModelSpec, fallback: string): string {
  return typeof spec.options.base_url === 'string' ? spec.options.base_url : fallback;
}
