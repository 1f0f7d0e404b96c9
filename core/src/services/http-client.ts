import { UpstreamTimeoutError, type HttpClient } from '@agent-host/sdk';

/** `fetch` with a timeout on every call; a timeout rejects with `UpstreamTimeoutError`. */
export function createHttpClient(defaultTimeoutMs: number): HttpClient {
  return {
    async fetch(url, options = {}) {
      const { timeoutMs = defaultTimeoutMs, signal, ...init } = options;
      const timeout = AbortSignal.timeout(timeoutMs);
      try {
        return await fetch(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
      } catch (error) {
        if (timeout.aborted && !signal?.aborted) {
          throw new UpstreamTimeoutError(`request to ${new URL(url).origin} timed out after ${timeoutMs} ms`);
        }
        throw error;
      }
    },
  };
}
