import { createHash } from 'node:crypto';
import OpenAI, { AzureOpenAI } from 'openai';
import {
  catalogKeyAvailability,
  withCatalogApiKey,
  type ChatModel,
  type ChatModelSpec,
  type HttpClient,
  type ModelAvailability,
  type ModelKeySource,
  type ModelProvider,
} from '@agent-host/sdk';
import { OpenAiSdkChatModel } from './openai-sdk-model.js';
import { PreparedCompletions } from './prepared-completions.js';

/** What the provider is built with: the base URL when a catalog entry gives none, the key source, the HTTP client. */
export interface OpenAiSdkProviderOptions extends ModelKeySource {
  baseUrl: string;
  /** The host's HTTP client (`coreServices.http`): every request goes through it. */
  http: HttpClient;
}

/** Clients kept per endpoint and key, each with the request it builds, built once. */
const CACHED_CLIENTS = 64;

const optionString = (spec: ChatModelSpec, name: string): string | undefined => {
  const value = spec.options[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * `model_provider = "openai"` on the official openai SDK: OpenAI, any OpenAI-compatible endpoint (vLLM, Ollama,
 * LM Studio), and Azure OpenAI when the catalog entry sets `options.azure_api_version`.
 */
export class OpenAiSdkProvider implements ModelProvider {
  readonly displayName = 'OpenAI-compatible (openai SDK)';
  readonly offline = false;
  private readonly clients = new Map<string, PreparedCompletions>();

  constructor(private readonly options: OpenAiSdkProviderOptions) {}

  createChatModel(spec: ChatModelSpec): ChatModel {
    return withCatalogApiKey('openai', spec, this.options, (apiKey) => new OpenAiSdkChatModel(spec, this.completions(spec, apiKey), this.options.log));
  }

  /** OpenAI's own API and Azure need a key; a local OpenAI-compatible server (vLLM, LM Studio, Ollama) may take none. */
  availability(spec: ChatModelSpec): ModelAvailability {
    const keyRequired = optionString(spec, 'azure_api_version') !== undefined || new URL(this.baseUrlOf(spec)).hostname === 'api.openai.com';
    return catalogKeyAvailability(spec, this.options, keyRequired);
  }

  private baseUrlOf(spec: ChatModelSpec): string {
    return optionString(spec, 'base_url') ?? this.options.baseUrl;
  }

  /** The chat completion requests of the client for `spec`'s endpoint and key. */
  private completions(spec: ChatModelSpec, apiKey: string | undefined): PreparedCompletions {
    const baseURL = this.baseUrlOf(spec);
    const apiVersion = optionString(spec, 'azure_api_version');
    const deployment = apiVersion ? (optionString(spec, 'azure_deployment') ?? spec.model_name) : undefined;
    // The key goes in only as a hash, so the map's keys never show it in clear (in a dump or a log).
    const keyHash = apiKey === undefined ? null : createHash('sha256').update(apiKey).digest('base64url');
    const cacheKey = JSON.stringify([baseURL, apiVersion, deployment, keyHash]);
    let completions = this.clients.get(cacheKey);
    if (completions) {
      this.clients.delete(cacheKey); // re-inserted below: most recently used last
    } else {
      // Endpoints such as a local vLLM need no key; OpenAI itself answers 401 (an UpstreamError). The client only builds
      // requests: they are sent by PreparedCompletions, bounded by the model's deadline and never retried.
      const apiKeyOrNone = apiKey ?? 'not-configured';
      const client = apiVersion
        ? new AzureOpenAI({ apiKey: apiKeyOrNone, endpoint: baseURL, apiVersion, deployment })
        : new OpenAI({ apiKey: apiKeyOrNone, baseURL });
      completions = new PreparedCompletions(client, this.options.http);
      if (this.clients.size >= CACHED_CLIENTS) this.clients.delete(this.clients.keys().next().value!);
    }
    this.clients.set(cacheKey, completions);
    return completions;
  }
}
