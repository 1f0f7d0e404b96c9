import { ChatAnthropic, type ChatAnthropicCallOptions } from '@langchain/anthropic';
import type { AIMessageChunk } from '@langchain/core/messages';
import {
  catalogKeyAvailability,
  withCatalogApiKey,
  type ChatModel,
  type ChatModelSpec,
  type ModelAvailability,
  type ModelProvider,
  type ProviderUsage,
} from '@agent-host/sdk';
import { baseUrlOf, jsonSchemaOf, LangChainChatModel, type LangChainProviderOptions, sdkFetch, usageOf, type ResponseSchema } from './langchain-chat-model.js';

/** The Anthropic API URL `@anthropic-ai/sdk` uses when none is given (it appends `/v1/messages`). */
export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';

class AnthropicChatModel extends LangChainChatModel<ChatAnthropicCallOptions> {
  readonly provider = 'anthropic';
  private readonly client: ChatAnthropic;

  constructor(spec: ChatModelSpec, apiKey: string | undefined, options: LangChainProviderOptions) {
    super(spec, options.log);
    const baseUrl = baseUrlOf(spec, options.baseUrl);
    this.client = new ChatAnthropic({
      model: spec.model_name,
      ...(spec.temperature !== null && { temperature: spec.temperature }),
      // A missing key still builds the model; the API answers 401 (an UpstreamError).
      apiKey: apiKey || 'not-configured',
      // Always explicit, so neither ANTHROPIC_BASE_URL nor a LangSmith gateway redirects the requests.
      anthropicApiUrl: baseUrl,
      // The catalog entry's or the configured key is the only credential: no ANTHROPIC_AUTH_TOKEN bearer.
      clientOptions: { timeout: spec.timeoutMs, authToken: null, fetch: sdkFetch(options.http) },
      maxRetries: 0,
      streamUsage: true,
    });
  }

  // The Anthropic SDK takes the call's signal per request.
  protected chatModel() {
    return this.client;
  }

  // Anthropic's native structured output (`output_config.format` json_schema,
  // what ChatAnthropic's `jsonSchema` method sends), not LangChain's default
  // forced-tool-call method: the answer stays JSON text in the content, streamed
  // as text deltas like any answer, and it combines with the caller's own tools.
  // The schema is sent as given (as for openai); the API wants
  // `additionalProperties: false` on objects and a model that supports
  // structured outputs (Claude 4.5 generation and later).
  protected responseSchemaOptions({ schema }: ResponseSchema): Partial<ChatAnthropicCallOptions> {
    return { outputConfig: { format: { type: 'json_schema', schema: jsonSchemaOf(schema) } } };
  }

  /**
   * Anthropic's `message_delta` carries the cumulative output count, while
   * `message_start` carries a preliminary one; LangChain sums the two, so the
   * output count of a stream is the last one reported.
   */
  protected override usage(message: AIMessageChunk, usageChunks?: readonly AIMessageChunk[]): ProviderUsage | undefined {
    const usage = usageOf(message);
    const last = usageChunks?.at(-1)?.usage_metadata;
    if (!usage || !last) return usage;
    return { input_tokens: usage.input_tokens, output_tokens: last.output_tokens ?? 0 };
  }
}

/** `model_provider = "anthropic"`: the Anthropic Messages API through LangChain (`@langchain/anthropic`). */
export class AnthropicProvider implements ModelProvider {
  readonly displayName = 'Anthropic (LangChain)';
  readonly offline = false;

  constructor(private readonly options: LangChainProviderOptions) {}

  createChatModel(spec: ChatModelSpec): ChatModel {
    return withCatalogApiKey('anthropic', spec, this.options, (apiKey) => new AnthropicChatModel(spec, apiKey, this.options));
  }

  availability(spec: ChatModelSpec): ModelAvailability {
    return catalogKeyAvailability(spec, this.options, true);
  }
}
