import { createHash } from 'node:crypto';
import { ChatOpenAI, type ChatOpenAICallOptions } from '@langchain/openai';
import { catalogKeyAvailability, withCatalogApiKey, type ChatModel, type ChatModelSpec, type ModelAvailability, type ModelProvider } from '@agent-host/sdk';
import { baseUrlOf, jsonSchemaOf, LangChainChatModel, sdkFetch, type LangChainProviderOptions, type ResponseSchema } from './langchain-chat-model.js';

class OpenAiChatModel extends LangChainChatModel<ChatOpenAICallOptions> {
  readonly provider = 'openai';
  private readonly client: ChatOpenAI;

  constructor(spec: ChatModelSpec, apiKey: string | undefined, options: LangChainProviderOptions) {
    super(spec, options.log);
    const baseUrl = baseUrlOf(spec, options.baseUrl);
    this.client = new ChatOpenAI({
      model: spec.model_name,
      ...(spec.temperature !== null && { temperature: spec.temperature }),
      // Endpoints such as a local vLLM need no key; OpenAI itself answers 401 (an UpstreamError).
      apiKey: apiKey || 'not-configured',
      configuration: { baseURL: baseUrl, fetch: sdkFetch(options.http) },
      timeout: spec.timeoutMs,
      maxRetries: 0,
      streamUsage: true,
    });
  }

  // The OpenAI SDK takes the call's signal per request.
  protected chatModel() {
    return this.client;
  }

  protected responseSchemaOptions({ name, schema }: ResponseSchema): Partial<ChatOpenAICallOptions> {
    return { response_format: { type: 'json_schema', json_schema: { name, schema: jsonSchemaOf(schema) } } };
  }
}

/** Built clients kept per model settings: building one (and its HTTP client) costs more than a short turn's streaming. */
const CACHED_MODELS = 64;

/** `model_provider = "openai"`: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, LM Studio) through LangChain. */
export class OpenAiCompatibleProvider implements ModelProvider {
  readonly displayName = 'OpenAI-compatible (LangChain)';
  readonly offline = false;
  private readonly models = new Map<string, ChatModel>();

  constructor(private readonly options: LangChainProviderOptions) {}

  createChatModel(spec: ChatModelSpec): ChatModel {
    return withCatalogApiKey('openai', spec, this.options, (apiKey) => this.cachedModel(spec, apiKey));
  }

  /** OpenAI's own API needs a key; a local OpenAI-compatible server (vLLM, LM Studio, Ollama) may take none. */
  availability(spec: ChatModelSpec): ModelAvailability {
    return catalogKeyAvailability(spec, this.options, new URL(baseUrlOf(spec, this.options.baseUrl)).hostname === 'api.openai.com');
  }

  private cachedModel(spec: ChatModelSpec, apiKey: string | undefined): ChatModel {
    // The key goes in only as a hash, so the map's keys never show it in clear (in a dump or a log).
    const keyHash = apiKey === undefined ? null : createHash('sha256').update(apiKey).digest('base64url');
    const key = JSON.stringify([spec.model_name, spec.temperature, spec.timeoutMs, spec.options, keyHash]);
    let model = this.models.get(key);
    if (model) {
      this.models.delete(key); // re-inserted below: most recently used last
    } else {
      model = new OpenAiChatModel(spec, apiKey, this.options);
      if (this.models.size >= CACHED_MODELS) this.models.delete(this.models.keys().next().value!);
    }
    this.models.set(key, model);
    return model;
  }
}
