// A ChatModel on the openai SDK's chat completions: the request is built from the host's messages as a plain object
// and sent as the SDK builds it (`PreparedCompletions`), streamed deltas become tokens as they arrive, tool-call
// fragments are joined by index, and usage comes from the last chunk (`stream_options.include_usage`). One deadline
// bounds the whole request, streaming included.
import type { OpenAI } from 'openai';
import type { ChatCompletionCreateParamsBase, ChatCompletionMessageParam, ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
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
  type Logger,
  type ProviderUsage,
  type ToolCallRequest,
} from '@agent-host/sdk';
import { completionChunks } from './completion-chunks.js';
import type { PreparedCompletions } from './prepared-completions.js';

/** The host's messages in the chat completions shape. */
function toOpenAi(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    switch (m.role) {
      case 'tool':
        return { role: 'tool', content: m.content, tool_call_id: m.tool_call_id ?? '' };
      case 'assistant':
        return m.tool_calls?.length
          ? {
              role: 'assistant',
              content: m.content,
              tool_calls: m.tool_calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })),
            }
          : { role: 'assistant', content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}

/** A tool call's arguments: the JSON object the model wrote, or an error naming the tool when it wrote something else. */
function argumentsOf(name: string, text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    throw new UpstreamError(`the model called ${name} with arguments that are not JSON: ${text.slice(0, 200)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new UpstreamError(`the model called ${name} with arguments that are not an object`);
  return parsed as Record<string, unknown>;
}

const usageOf = (usage: OpenAI.CompletionUsage | null | undefined): ProviderUsage | undefined =>
  usage ? { input_tokens: usage.prompt_tokens ?? 0, output_tokens: usage.completion_tokens ?? 0 } : undefined;

const toolCallOf = (call: ChatCompletionMessageToolCall): ToolCallRequest[] =>
  call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: argumentsOf(call.function.name, call.function.arguments) }] : [];

export class OpenAiSdkChatModel implements ChatModel {
  readonly provider = 'openai';
  readonly modelName: string;

  constructor(
    private readonly spec: ChatModelSpec,
    private readonly completions: PreparedCompletions,
    private readonly log: Logger,
  ) {
    this.modelName = spec.model_name;
  }

  private request(messages: ChatMessage[], options: ChatCallOptions | undefined): ChatCompletionCreateParamsBase {
    return {
      model: this.modelName,
      messages: toOpenAi(messages),
      ...(this.spec.temperature !== null && { temperature: this.spec.temperature }),
      ...(options?.tools?.length && {
        tools: options.tools.map((t) => ({
          type: 'function' as const,
          function: { name: t.name, description: t.description, parameters: t.parameters as Record<string, unknown> },
        })),
      }),
      ...(options?.responseSchema && {
        response_format: {
          type: 'json_schema' as const,
          json_schema: { name: options.responseSchema.name, schema: options.responseSchema.schema as Record<string, unknown> },
        },
      }),
    };
  }

  async *stream(messages: ChatMessage[], options?: ChatCallOptions): AsyncIterable<ChatStreamChunk> {
    options?.signal?.throwIfAborted();
    // One deadline for the whole request, streaming included, joined with the turn's signal.
    const deadline = callDeadline(this.spec.timeoutMs, options?.signal);
    const calls: { id: string; name: string; arguments: string }[] = [];
    let usage: ProviderUsage | undefined;
    try {
      const response = await this.completions.send(
        { ...this.request(messages, options), stream: true, stream_options: { include_usage: true } },
        deadline.signal,
      );
      for await (const batch of completionChunks(response)) {
        for (const chunk of batch) {
          const delta = chunk.choices[0]?.delta;
          if (delta?.content) yield { type: 'token', content: delta.content };
          for (const part of delta?.tool_calls ?? []) {
            const call = (calls[part.index] ??= { id: '', name: '', arguments: '' });
            if (part.id) call.id = part.id;
            if (part.function?.name) call.name += part.function.name;
            if (part.function?.arguments) call.arguments += part.function.arguments;
          }
          if (chunk.usage) usage = usageOf(chunk.usage);
        }
      }
      // A body cut short by an abort or the deadline may end without an error: the call must still fail.
      deadline.signal.throwIfAborted();
    } catch (error) {
      throw this.mapError(error, options, deadline.timedOut);
    } finally {
      deadline.dispose();
    }
    for (const [index, call] of calls.entries()) {
      if (call) yield { type: 'tool_call', call: { id: call.id || `call_${index}`, name: call.name, arguments: argumentsOf(call.name, call.arguments) } };
    }
    if (usage) yield { type: 'usage', usage };
  }

  async invoke(messages: ChatMessage[], options?: ChatCallOptions): Promise<ChatCompletion> {
    options?.signal?.throwIfAborted();
    const deadline = callDeadline(this.spec.timeoutMs, options?.signal);
    let completion: OpenAI.ChatCompletion;
    try {
      completion = (await (await this.completions.send(this.request(messages, options), deadline.signal)).body.json()) as OpenAI.ChatCompletion;
    } catch (error) {
      throw this.mapError(error, options, deadline.timedOut);
    } finally {
      deadline.dispose();
    }
    const message = completion.choices[0]?.message;
    const usage = usageOf(completion.usage);
    return { content: message?.content ?? '', tool_calls: (message?.tool_calls ?? []).flatMap(toolCallOf), ...(usage && { usage }) };
  }

  /** A caller that went away gets its own abort reason; the deadline becomes 504, any other failure 502. */
  private mapError(error: unknown, options: ChatCallOptions | undefined, timedOut: boolean): unknown {
    const signal = options?.signal;
    if (signal?.aborted) return signal.reason;
    if (timedOut) return new UpstreamTimeoutError(`model ${this.modelName} did not answer in time`);
    if (error instanceof UpstreamError) return error;
    // The SDK's errors start with the HTTP status when there is one (an error event mid-stream has none).
    const message = (error as Error).message ?? String(error);
    (options?.log ?? this.log).warn({ provider: this.provider, model: this.modelName, err: message }, 'model request failed');
    return new UpstreamError(`model ${this.modelName} request failed: ${message}`, { cause: error });
  }
}
