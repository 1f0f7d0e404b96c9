import { UpstreamError, UpstreamTimeoutError, type Embedder, type EmbedderInfo, type HttpClient, type Logger } from '@agent-host/sdk';

export interface OpenAiEmbedderOptions {
  /** Base URL ending before `/embeddings`, for example `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  /** The vector length the model returns; a different length is an error, never stored. */
  dim: number;
  /** Send `dimensions: dim` (models that can shorten their vectors, such as text-embedding-3-*). */
  sendDimensions: boolean;
  /** Read per request, so a rotated key needs no restart; no Authorization header when unset (local servers). */
  apiKey: () => string | undefined;
  /** The host's HTTP client (`coreServices.http`); the embedder's own deadline covers reading the answer too. */
  http: HttpClient;
  /** Name of the variable `apiKey` reads, for error messages. */
  apiKeyEnv: string;
  /** Texts per request. */
  batchSize: number;
  /** Deadline of one request, reading its answer included. */
  timeoutMs: number;
  /** Further tries of a request answered 429 or 5xx. */
  maxRetries: number;
  log: Logger;
}

interface EmbeddingsResponse {
  data?: { index?: unknown; embedding?: unknown }[];
}

/** Longest wait a `retry-after` header may ask for before the request fails instead. */
const MAX_RETRY_AFTER_MS = 10_000;
const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** The `error.message` of an OpenAI-style error body, else the start of the body. */
function upstreamMessage(body: string): string {
  try {
    const message = (JSON.parse(body) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string') return message;
  } catch {
    // not JSON
  }
  return body.slice(0, 300) || '(empty body)';
}

/**
 * `openai`: any OpenAI-compatible `POST <base_url>/embeddings` (OpenAI, vLLM,
 * Ollama, LM Studio, text-embeddings-inference). Texts go in batches of
 * `batchSize`, one request at a time, each with its own deadline; answers
 * are checked for count, order (`index`) and vector length.
 */
export class OpenAiEmbedder implements Embedder {
  private readonly url: string;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    this.url = `${options.baseUrl.replace(/\/+$/, '')}/embeddings`;
  }

  describe(): EmbedderInfo {
    return { backend_type: 'openai', provider: 'openai', model: this.options.model, dim: this.options.dim };
  }

  async embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]> {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += this.options.batchSize) {
      vectors.push(...(await this.embedBatch(texts.slice(start, start + this.options.batchSize), options?.signal)));
    }
    return vectors;
  }

  private async embedBatch(input: string[], signal?: AbortSignal): Promise<number[][]> {
    for (let attempt = 0; ; attempt++) {
      const { status, body, retryAfterMs } = await this.post(input, signal);
      if (status >= 200 && status < 300) return this.vectorsOf(body, input.length);
      const retryable = status === 429 || status >= 500;
      const waitMs = retryAfterMs ?? 500 * 2 ** attempt;
      if (retryable && attempt < this.options.maxRetries && waitMs <= MAX_RETRY_AFTER_MS) {
        this.options.log.warn({ status, attempt: attempt + 1, url: this.url }, 'embeddings request failed, retrying');
        await sleep(waitMs, signal);
        continue;
      }
      throw this.statusError(status, body);
    }
  }

  /** One request; the deadline covers reading the answer too. */
  private async post(input: string[], signal?: AbortSignal): Promise<{ status: number; body: string; retryAfterMs?: number }> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const key = this.options.apiKey();
    try {
      const response = await this.options.http.fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({
          model: this.options.model,
          input,
          encoding_format: 'float',
          ...(this.options.sendDimensions ? { dimensions: this.options.dim } : {}),
        }),
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        timeoutMs: Infinity,
      });
      const retryAfter = Number(response.headers.get('retry-after'));
      const body = await response.text();
      return Number.isFinite(retryAfter) && retryAfter > 0
        ? { status: response.status, body, retryAfterMs: retryAfter * 1000 }
        : { status: response.status, body };
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (timeout.aborted) throw new UpstreamTimeoutError(`embeddings request to ${this.url} timed out after ${this.options.timeoutMs} ms`);
      const cause = (error as Error & { cause?: Error }).cause?.message ?? (error as Error).message;
      throw new UpstreamError(`cannot reach the embeddings endpoint ${this.url}: ${cause}`, { cause: error });
    }
  }

  private statusError(status: number, body: string): UpstreamError {
    const message = upstreamMessage(body);
    if (status === 401 || status === 403) {
      const hint = this.options.apiKey() ? '' : ` (${this.options.apiKeyEnv} is not set)`;
      return new UpstreamError(`embeddings endpoint ${this.url} refused the API key${hint} (${status}): ${message}`);
    }
    return new UpstreamError(`embeddings endpoint ${this.url} answered ${status} for model "${this.options.model}": ${message}`);
  }

  private vectorsOf(body: string, count: number): number[][] {
    let parsed: EmbeddingsResponse;
    try {
      parsed = JSON.parse(body) as EmbeddingsResponse;
    } catch {
      throw new UpstreamError(`embeddings endpoint ${this.url} answered with invalid JSON: ${body.slice(0, 200)}`);
    }
    const data = parsed.data;
    if (!Array.isArray(data) || data.length !== count) {
      throw new UpstreamError(`embeddings endpoint ${this.url} returned ${Array.isArray(data) ? data.length : 'no'} embeddings for ${count} inputs`);
    }
    const vectors = new Array<number[]>(count);
    for (const [position, item] of data.entries()) {
      const index = typeof item.index === 'number' ? item.index : position;
      const embedding = item.embedding;
      if (!Array.isArray(embedding) || !embedding.every((v) => typeof v === 'number')) {
        throw new UpstreamError(`embeddings endpoint ${this.url} returned a non-numeric embedding (was encoding_format ignored?)`);
      }
      if (embedding.length !== this.options.dim) {
        throw new UpstreamError(
          `model "${this.options.model}" returned ${embedding.length}-dimensional vectors, but openai_dim is ${this.options.dim}: set [plugins.embedders].openai_dim to the model's size`,
        );
      }
      if (index < 0 || index >= count || vectors[index])
        throw new UpstreamError(`embeddings endpoint ${this.url} returned a duplicate or out-of-range index ${index}`);
      vectors[index] = embedding as number[];
    }
    return vectors;
  }
}
