/** `fetch` options plus a timeout. @public */
export interface HttpRequestOptions extends RequestInit {
  /** Aborts the request after this many ms; defaults to `[timeouts].http_request_seconds`. */
  timeoutMs?: number;
}

/**
 * Outbound HTTP with a timeout on every call. A timeout rejects with
 * `UpstreamTimeoutError`.
 * @public
 */
export interface HttpClient {
  fetch(url: string | URL, options?: HttpRequestOptions): Promise<Response>;
}
