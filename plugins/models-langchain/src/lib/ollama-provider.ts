import type { AIMessageChunk } from '@langchain/core/messages';
import { ChatOllama, type ChatOllamaCallOptions } from '@langchain/ollama';
import type { ChatModel, ChatModelSpec, ModelProvider, ProviderUsage } from '@agent-host/sdk';
import { baseUrlOf, jsonSchemaOf, LangChainChatModel, type LangChainProviderOptions, sdkFetch, usageOf, type ResponseSchema } from './langchain-chat-model.js';

export const OLLAMA_DEFAULT_BASE_URL = 'http://127.0.0.1:11434';

class OllamaChatModel extends LangChainChatModel<ChatOllamaCallOptions> {
  readonly provider = 'ollama';
  private readonly baseUrl: string;
  private readonly fetch: typeof fetch;

  constructor(
    private readonly spec: ChatModelSpec,
    options: LangChainProviderOptions,
  ) {
    super(spec, options.log);
    this.baseUrl = baseUrlOf(spec, options.baseUrl);
    this.fetch = sdkFetch(options.http);
  }

  /**
   * One ChatOllama per call: the `ollama` client LangChain uses gives the caller
   * no per-request signal (it only checks the signal between stream lines, and
   * its `abort()` cuts every stream of the client), so the call's own fetch
   * carries the call's signal and the HTTP request is dropped at the deadline
   * or on abort, even while the server sends nothing.
   */
  protected chatModel(signal: AbortSignal) {
    return new ChatOllama({
      model: this.spec.model_name,
      // Always explicit, so OLLAMA_BASE_URL does not redirect the requests.
      baseUrl: this.baseUrl,
      ...(this.spec.temperature !== null && { temperature: this.spec.temperature }),
      maxRetries: 0,
      fetch: (input, init) => this.fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }),
    });
  }

  // Ollama's native structured output: `format` takes a JSON schema, and the
  // answer is JSON text in the content, streamed like any answer.
  protected responseSchemaOptions({ schema }: ResponseSchema): Partial<ChatOllamaCallOptions> {
    return { format: jsonSchemaOf(schema) };
  }

  /**
   * LangChain reports zero counts when the final `done` line carries none;
   * that is no usage (core estimates it), not an answer of zero tokens.
   */
  protected override usage(message: AIMessageChunk): ProviderUsage | undefined {
    const metadata = message.response_metadata ?? {};
    if (typeof metadata.prompt_eval_count !== 'number' && typeof metadata.eval_count !== 'number') return undefined;
    return usageOf(message);
  }
}

/** `model_provider = "ollama"`: a local or remote Ollama server's native chat API through LangChain (`@langchain/ollama`). */
export class OllamaProvider implements ModelProvider {
  readonly displayName = 'Ollama (LangChain)';
  readonly offline = false;

  constructor(private readonly options: LangChainProviderOptions) {}

  createChatModel(spec: ChatModelSpec): ChatModel {
    return new OllamaChatModel(spec, this.options);
  }
}
