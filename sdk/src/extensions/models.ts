import type { Logger } from '../services/logger.js';

/** A JSON Schema document. @public */
export type JsonSchema = Readonly<Record<string, unknown>>;

/** A tool the model may call. @public */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
}

/** A tool call requested by the model. @public */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

/** One message of a model conversation. @public */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** For `role="tool"`: the call this message answers. */
  tool_call_id?: string;
  /** For `role="assistant"`: the calls the model asked for. */
  tool_calls?: ToolCallRequest[];
}

/** Token counts a provider reported. @public */
export interface ProviderUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Which model to build and how. @public */
export interface ChatModelSpec {
  model_name: string;
  /** `null` leaves the provider's default. */
  temperature: number | null;
  /** Shared outbound timeout (`[timeouts].model_request_seconds`), in ms. */
  timeoutMs: number;
  /** Extra options from the model catalog entry (for example `base_url`). */
  options: Readonly<Record<string, unknown>>;
}

/** Per-call options. @public */
export interface ChatCallOptions {
  signal?: AbortSignal;
  /**
   * The logger of the work the call serves (a chat turn's names its request, trace and turn): what a provider logs
   * about the call goes through it when given (since SDK 1.17.0). The host runs a turn outside any async request
   * scope, so a provider's own logger does not name the request.
   */
  log?: Logger;
  tools?: ToolSpec[];
  /** Ask for JSON output matching this schema (structured output). */
  responseSchema?: { name: string; schema: JsonSchema };
}

/** One piece of a streamed answer. @public */
export type ChatStreamChunk = { type: 'token'; content: string } | { type: 'tool_call'; call: ToolCallRequest } | { type: 'usage'; usage: ProviderUsage };

/** A whole answer. `usage` is absent when the provider did not report it. @public */
export interface ChatCompletion {
  content: string;
  tool_calls: ToolCallRequest[];
  usage?: ProviderUsage;
}

/**
 * A ready-to-call chat model. `stream` yields tokens as they arrive and never
 * buffers the reply; both methods honour `signal` and the spec's timeout.
 * @public
 */
export interface ChatModel {
  readonly provider: string;
  readonly modelName: string;
  stream(messages: ChatMessage[], options?: ChatCallOptions): AsyncIterable<ChatStreamChunk>;
  invoke(messages: ChatMessage[], options?: ChatCallOptions): Promise<ChatCompletion>;
}

/**
 * A model provider, registered under its `model_provider` value (for example
 * `openai`, `offline`).
 * @public
 */
export interface ModelProvider {
  readonly displayName: string;
  /** True for deterministic providers that call no model; `/models` labels them. */
  readonly offline: boolean;
  createChatModel(spec: ChatModelSpec): ChatModel;
  /**
   * Whether a catalog model can be called as configured, decided without calling it (for example: no API key where
   * the endpoint needs one). `/models` shows the reason. A provider without it is taken as available.
   */
  availability?(spec: ChatModelSpec): ModelAvailability;
}

/** What {@link ModelProvider.availability} decided. @public */
export type ModelAvailability = { available: true } | { available: false; reason: string };
