/** `fetch` options plus a timeout. @public */
export interface HttpRequestOptions extends RequestInit {
  /** Aborts the request after this many ms; defaults to `[timeouts].http_request_seconds`; `Infinity` for none (streams). */
  timeoutMs?: number;
}

/**
 * Outbound HTTP with a timeout on every call. A timeout rejects with
 * `UpstreamTimeoutError`.
 * @public
 */
export interface HttpClient {
  /** For URLs an operator configured: trusted. */
  fetch(url: string | URL, options?: HttpRequestOptions): Promise<Response>;
  /**
   * For URLs that arrived through the API (a tool server's or a tool's URL): only public addresses (checked on the
   * address actually connected to, redirects followed and checked hop by hop) unless `[http] allowed_private_hosts`
   * lists the host, and the body cut off past `[http] max_response_bytes`. A refusal rejects like a failed fetch,
   * with the reason as its `cause`. Since SDK 1.3.0.
   */
  fetchUntrusted(url: string | URL, options?: HttpRequestOptions): Promise<Response>;
}
