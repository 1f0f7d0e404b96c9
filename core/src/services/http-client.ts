import { UpstreamTimeoutError, type HttpClient, type HttpRequestOptions } from '@agent-host/sdk';
import { createGuardedFetch, type OutboundPolicy } from './outbound-guard.js';

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** `fetch` with a timeout on every call; a timeout rejects with `UpstreamTimeoutError`. */
function withTimeout(fetchImpl: Fetch, defaultTimeoutMs: number) {
  return async (url: string | URL, options: HttpRequestOptions = {}) => {
    const { timeoutMs = defaultTimeoutMs, signal, ...init } = options;
    if (!Number.isFinite(timeoutMs)) return fetchImpl(url, { ...init, ...(signal && { signal }) });
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await fetchImpl(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    } catch (error) {
      if (timeout.aborted && !signal?.aborted) {
        throw new UpstreamTimeoutError(`request to ${new URL(url).origin} timed out after ${timeoutMs} ms`);
      }
      throw error;
    }
  };
}

/** `coreServices.http`: trusted fetches for configured URLs, guarded ones (`[http]`) for URLs from the API. */
export function createHttpClient(defaultTimeoutMs: number, policy: OutboundPolicy): HttpClient {
  return { fetch: withTimeout(fetch, defaultTimeoutMs), fetchUntrusted: withTimeout(createGuardedFetch(policy), defaultTimeoutMs) };
}
