// The host's HTTP client (`coreServices.http`) for tests that build a plugin's parts directly, recording what was
// fetched through it: a part that fetched on its own would leave the record empty.
import type { HttpClient } from '@agent-host/sdk';
import { createHttpClient } from '../../core/src/services/http-client.js';

export interface RecordingHttpClient extends HttpClient {
  /** URLs fetched through `fetch` or `request`, in order. */
  readonly fetched: string[];
}

export function recordingHttp(): RecordingHttpClient {
  const http = createHttpClient(30_000, { allowedPrivateHosts: [], maxResponseBytes: 10 * 1024 * 1024, maxRedirects: 5 });
  const fetched: string[] = [];
  return {
    fetched,
    fetch: (url, options) => {
      fetched.push(String(url));
      return http.fetch(url, options);
    },
    fetchUntrusted: http.fetchUntrusted,
    request: (url, options) => {
      fetched.push(String(url));
      return http.request(url, options);
    },
  };
}
