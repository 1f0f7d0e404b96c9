import type { AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import {
  UpstreamError,
  UpstreamTimeoutError,
  type ChatCallOptions,
  type ChatCompletion,
  type ChatMessage,
  type ChatModel,
  type ChatModelSpec,
  type ChatStreamChunk,
  type Logger,
  type ModelProvider,
  type ProviderUsage,
  type ToolCallRequest,
} from '@agent-host/sdk';
import { textOf, toLangChain } from './langchain-messages.js';

export interface OpenAiProviderOptions {
  baseUrl: string;
  apiKey: () => string | undefined;
  log: Logger;
}

const toolCallsOf = (message: AIMessageChunk): ToolCallRequest[] =>
  (message.tool_calls ?? []).map((c, i) => ({ id: c.id ?? `call_${i}`, name: c.name, arguments: c.args as Record<string, unknown> }));

/**
 * The usage the server reported, or `undefined` when it reported none (LangChain
 * leaves an empty `usage_metadata` object on invoke when the response carries
 * no `usage`; LangChain drops zero counts, so a missing count is zero).
 */
function usageOf(message: AIMessageChunk): ProviderUsage | undefined {
  const usage = message.usage_metadata;
  const input = usage?.input_tokens;
  const output = usage?.output_tokens;
  if (typeof input !== 'number' && typeof output !== 'number') return undefined;
  return { input_tokens: input ?? 0, output_tokens: output ?? 0 };
}

class LangChainChatModel implements ChatModel {
  readonly provider = 'openai';
  readonly modelName: string;
  private readonly client: ChatOpenAI;
  private readonly timeoutMs: number;

  constructor(spec: ChatModelSpec, private readonly options: OpenAiProviderOptions) {
    this.modelName = spec.model_name;
    this.timeoutMs = spec.timeoutMs;
    const baseUrl = typeof spec.options.base_url === 'string' ? spec.options.base_url : options.baseUrl;
    this.client = new ChatOpenAI({
      model: spec.model_name,
      ...(spec.temperature !== null && { temperature: spec.temperature }),
      apiKey: options.apiKey() ?? 'not-configured',
      configuration: { baseURL: baseUrl },
      timeout: spec.timeoutMs,
      maxRetries: 0,
      streamUsage: true,
    });
  }

  private runnable(options?: ChatCallOptions) {
    let model = options?.tools?.length
      ? this.client.bindTools(options.tools.map((t) => ({ type: 'function' as const, function: { name: t.name, description: t.description, parameters: t.parameters as Record<string, unknown> } })))
      : this.client;
    if (options?.responseSchema) {
      model = model.withConfig({
        response_format: { type: 'json_schema', json_schema: { name: options.responseSchema.name, schema: options.responseSchema.schema as Record<string, unknown> } },
      }) as typeof model;
    }
    return model;
  }

  /** The caller's signal joined with one deadline for the whole request, streaming included. */
  private deadline(options?: ChatCallOptions) {
    const deadline = AbortSignal.timeout(this.timeoutMs);
    return { deadline, signal: options?.signal ? AbortSignal.any([options.signal, deadline]) : deadline };
  }

  async *stream(messages: ChatMessage[], options?: ChatCallOptions): AsyncIterable<ChatStreamChunk> {
    let merged: AIMessageChunk | undefined;
    const { deadline, signal } = this.deadline(options);
    try {
      const stream = await this.runnable(options).stream(toLangChain(messages), { signal });
      for await (const chunk of stream) {
        merged = merged ? merged.concat(chunk) : chunk;
        const text = textOf(chunk.content);
        if (text) yield { type: 'token', content: text };
      }
    } catch (error) {
      throw this.mapError(error, options?.signal, deadline);
    }
    if (!merged) return;
    for (const call of toolCallsOf(merged)) yield { type: 'tool_call', call };
    const usage = usageOf(merged);
    if (usage) yield { type: 'usage', usage };
  }

  async invoke(messages: ChatMessage[], options?: ChatCallOptions): Promise<ChatCompletion> {
    const { deadline, signal } = this.deadline(options);
    try {
      const message = (await this.runnable(options).invoke(toLangChain(messages), { signal })) as AIMessageChunk;
      const usage = usageOf(message);
      return { content: textOf(message.content), tool_calls: toolCallsOf(message), ...(usage && { usage }) };
    } catch (error) {
      throw this.mapError(error, options?.signal, deadline);
    }
  }

  private mapError(error: unknown, signal: AbortSignal | undefined, deadline: AbortSignal): unknown {
    if (signal?.aborted) return error;
    const message = (error as Error).message ?? String(error);
    if (deadline.aborted || (error as Error).name?.includes('Timeout') || /timed? ?out/i.test(message)) {
      return new UpstreamTimeoutError(`model ${this.modelName} did not answer in time`);
    }
    this.options.log.warn({ model: this.modelName, err: message }, 'model request failed');
    return new UpstreamError(`model ${this.modelName} request failed: ${message}`, { cause: error });
  }
}

/** `model_provider = "openai"`: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio) through LangChain. */
export class OpenAiCompatibleProvider implements ModelProvider {
  readonly displayName = 'OpenAI-compatible (LangChain)';
  readonly offline = false;

  constructor(private readonly options: OpenAiProviderOptions) {}

  createChatModel(spec: ChatModelSpec): ChatModel {
    return new LangChainChatModel(spec, this.options);
  }
}
