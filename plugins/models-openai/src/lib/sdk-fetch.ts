import type { HttpClient, HttpStreamResponse } from '@agent-host/sdk';

/**
 * A response as node-fetch gives it, its body a Node stream: the openai SDK reads such a body as it reads a web
 * stream (it iterates whatever is async-iterable), so a streamed answer's chunks reach it without the web-streams
 * layer of WHATWG `fetch`. Only the members the SDK reads.
 */
class NodeBodyResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: Headers;
  readonly url: string;
  readonly body: HttpStreamResponse['body'];

  constructor(response: HttpStreamResponse) {
    ({ status: this.status, headers: this.headers, url: this.url, body: this.body } = response);
    this.ok = this.status >= 200 && this.status < 300;
  }

  text(): Promise<string> {
    return this.body.text();
  }

  json(): Promise<unknown> {
    return this.body.json();
  }
}

/**
 * The SDK's `fetch`, on the host's HTTP client: its own requests (a JSON body, or none) through `http.request`, which
 * costs a streamed answer about a sixth less CPU than `fetch` (bench/eval, bench/stream); anything else (an upload)
 * through `http.fetch`. The model's deadline and the turn's signal bound each call, so neither adds a timeout.
 */
export function sdkFetch(http: HttpClient): (url: string | URL, init?: RequestInit) => Promise<Response> {
  return async (url, init = {}) => {
    const { body, ...rest } = init;
    if (body != null && typeof body !== 'string') return http.fetch(url, { ...init, timeoutMs: Infinity });
    return new NodeBodyResponse(await http.request(url, { ...rest, body: body ?? undefined, timeoutMs: Infinity })) as unknown as Response;
  };
}
