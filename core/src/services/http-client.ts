import { Agent, request, type Dispatcher } from 'undici';
import { UpstreamTimeoutError, type HttpClient, type HttpStreamRequestOptions, type HttpStreamResponse } from '@agent-host/sdk';
import { createGuardedFetch, type OutboundPolicy } from './outbound-guard.js';

type Call<I, R> = (url: string | URL, init: I) => Promise<R>;

/** A call (`fetch` or `request`) with a timeout on every call; a timeout rejects with `UpstreamTimeoutError`. */
function withTimeout<I extends { signal?: AbortSignal | null }, R>(call: Call<I, R>, defaultTimeoutMs: number) {
  return async (url: string | URL, options: I & { timeoutMs?: number } = {} as I) => {
    const { timeoutMs = defaultTimeoutMs, signal, ...init } = options;
    if (!Number.isFinite(timeoutMs)) return call(url, { ...init, ...(signal && { signal }) } as I);
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await call(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout } as I);
    } catch (error) {
      if (timeout.aborted && !signal?.aborted) {
        throw new UpstreamTimeoutError(`request to ${new URL(url).origin} timed out after ${timeoutMs} ms`);
      }
      throw error;
    }
  };
}

const headersOf = (raw: Record<string, string | string[] | undefined>): Headers => {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const one of value) headers.append(name, one);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
};

/** `HttpClient.request` on undici's dispatcher API, through an agent that follows redirects as `fetch` does (20 at most). */
function streamRequest(dispatcher: Dispatcher): Call<Omit<HttpStreamRequestOptions, 'timeoutMs'>, HttpStreamResponse> {
  return async (url, { method = 'GET', headers, body, signal }) => {
    const response = await request(url, {
      dispatcher,
      method: method as Dispatcher.HttpMethod,
      headers: headers as Dispatcher.RequestOptions['headers'],
      body,
      signal: signal ?? undefined,
    });
    // Built when read: a streamed model answer reads its headers only when it fails.
    let built: Headers | undefined;
    return {
      status: response.statusCode,
      get headers(): Headers {
        return (built ??= headersOf(response.headers));
      },
      url: String(url),
      body: response.body,
    };
  };
}

/** `coreServices.http`: trusted fetches for configured URLs, guarded ones (`[http]`) for URLs from the API. */
export function createHttpClient(defaultTimeoutMs: number, policy: OutboundPolicy): HttpClient {
  return {
    fetch: withTimeout(fetch, defaultTimeoutMs),
    fetchUntrusted: withTimeout(createGuardedFetch(policy), defaultTimeoutMs),
    request: withTimeout(streamRequest(new Agent({ maxRedirections: 20 })), defaultTimeoutMs),
  };
}
