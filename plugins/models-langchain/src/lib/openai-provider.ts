import { ChatOpenAI, type ChatOpenAICallOptions } from '@langchain/openai';
import type { ChatModel, ChatModelSpec, ModelProvider } from '@agent-host/sdk';
import { baseUrlOf, jsonSchemaOf, LangChainChatModel, type LangChainProviderOptions, type ChatRunnable, type ResponseSchema } from './langchain-chat-model.js';

class OpenAiChatModel extends LangChainChatModel<ChatOpenAICallOptions> {
  readonly provider = 'openai';
  private readonly client: ChatOpenAI;

  constructor(spec: ChatModelSpec, options: LangChainProviderOptions) {
    super(spec, options.log);
    const baseUrl = baseUrlOf(spec, options.baseUrl);
    this.client = new ChatOpenAI({
      model: spec.model_name,
      ...(spec.temperature !== null && { temperature: spec.temperature }),
      apiKey: options.apiKey?.() || 'not-configured',
      configuration: { baseURL: baseUrl },
      timeout: spec.timeoutMs,
      maxRetries: 0,
      streamUsage: true,
    });
  }

  // The OpenAI SDK takes the call's signal per request.
  protected chatModel() {
    return this.client;
  }

  protected withResponseSchema(model: ChatRunnable<ChatOpenAICallOptions>, { name, schema }: ResponseSchema) {
    return model.withConfig({ response_format: { type: 'json_schema', json_schema: { name, schema: jsonSchemaOf(schema) } } });
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
    const key = JSON.stringify([spec.model_name, spec.temperature, spec.timeoutMs, spec.options, this.options.apiKey?.() ?? null]);
    let model = this.models.get(key);
    if (model) {
      this.models.delete(key); // re-inserted below: most recently used last
    } else {
      model = new OpenAiChatModel(spec, this.options);
      if (this.models.size >= CACHED_MODELS) this.models.delete(this.models.keys().next().value!);
    }
    this.models.set(key, model);
    return model;
  }
}
