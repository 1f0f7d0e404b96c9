import type { Readable } from 'node:stream';

/** `fetch` options plus a timeout. @public */
export interface HttpRequestOptions extends RequestInit {
  /** Aborts the request after this many ms; defaults to `[timeouts].http_request_seconds`; `Infinity` for none (streams). */
  timeoutMs?: number;
}

/** {@link HttpClient.request}'s options: `fetch`'s, with a string body or none. Since SDK 1.15.0. @public */
export interface HttpStreamRequestOptions extends Omit<HttpRequestOptions, 'body'> {
  /** The request's body (a JSON text, say). */
  body?: string;
}

/**
 * A response whose body is a Node stream, as node-fetch gives it: async-iterable, with `text()`, `json()` and
 * `arrayBuffer()` to read it whole. Since SDK 1.15.0.
 * @public
 */
export interface HttpStreamResponse {
  /** The final response's status (after any redirect). */
  readonly status: number;
  readonly headers: Headers;
  /** The URL asked for (before any redirect). */
  readonly url: string;
  /** Read it once: iterate it, or `text()`, `json()` or `arrayBuffer()`; an unread body holds its connection. */
  readonly body: Readable & { text(): Promise<string>; json(): Promise<unknown>; arrayBuffer(): Promise<ArrayBuffer> };
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
  /**
   * `fetch` for a hot path (a model call), for trusted URLs: the same timeout and redirects, but the body comes as a
   * Node stream ({@link HttpStreamResponse}), without WHATWG fetch's request and web-stream objects: a streamed
   * model answer costs about a sixth less CPU. An abort rejects with the signal's reason, as `fetch`. Since SDK 1.15.0.
   */
  request(url: string | URL, options?: HttpStreamRequestOptions): Promise<HttpStreamResponse>;
}
