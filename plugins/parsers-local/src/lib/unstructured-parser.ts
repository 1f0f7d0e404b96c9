import {
  callDeadline,
  BadRequestError,
  UpstreamError,
  UpstreamTimeoutError,
  type DocumentInput,
  type DocumentParser,
  type HttpClient,
  type ParsedDocument,
  type ParsedElement,
} from '@agent-host/sdk';
import { UnstructuredClient, type SDKOptions } from 'unstructured-client';
import { LoggerHook } from 'unstructured-client/hooks/custom/LoggerHook.js';
import { SplitPdfHook } from 'unstructured-client/hooks/custom/SplitPdfHook.js';
import { SDKHooks } from 'unstructured-client/hooks/hooks.js';
import { HTTPClient } from 'unstructured-client/lib/http.js';
import { ConnectionError, RequestTimeoutError, UnstructuredClientError } from 'unstructured-client/sdk/models/errors';
import type { Strategy } from 'unstructured-client/sdk/models/shared';
import { parsedDocument } from './elements.js';
import type { UnstructuredStrategyName } from './local-content-types.js';

export interface UnstructuredParserOptions {
  /** The API's base URL; a trailing `/general/v0/general` (as Unstructured's docs quote it) is accepted too. */
  url: string;
  /** Read per request, so a rotated key needs no restart; none is sent when it is unset (a self-hosted API). */
  apiKey: () => string | undefined;
  strategy: UnstructuredStrategyName;
  timeoutMs: number;
  /** The host's HTTP client (`coreServices.http`), which the client's requests go through. */
  http: HttpClient;
}

// Bulky or per-request fields that a parse snapshot has no use for.
const DROPPED_METADATA = new Set(['coordinates', 'image_base64', 'orig_elements', 'filename', 'file_directory', 'last_modified']);

interface UnstructuredElement {
  type?: unknown;
  element_id?: unknown;
  text?: unknown;
  metadata?: Record<string, unknown>;
}

function toElement(raw: UnstructuredElement): ParsedElement {
  const metadata = Object.fromEntries(Object.entries(raw.metadata ?? {}).filter(([key]) => !DROPPED_METADATA.has(key)));
  if (typeof raw.element_id === 'string') metadata.element_id = raw.element_id;
  return { type: typeof raw.type === 'string' ? raw.type : 'UncategorizedText', text: typeof raw.text === 'string' ? raw.text : '', metadata };
}

function detailOf(error: UnstructuredClientError): string {
  try {
    const detail = (JSON.parse(error.body) as { detail?: unknown }).detail;
    if (detail !== undefined) return typeof detail === 'string' ? detail : JSON.stringify(detail);
  } catch {
    // not JSON: the body itself is the best description
  }
  return error.body.slice(0, 500) || error.message;
}

/** Turns the client's failures into the host's errors; a caller's abort is rethrown as it is. */
function hostError(error: unknown, input: DocumentInput, url: string, signal: AbortSignal | undefined, timedOut: boolean): unknown {
  if (signal?.aborted) return signal.reason;
  if (timedOut || error instanceof RequestTimeoutError)
    return new UpstreamTimeoutError(`Unstructured API at ${url} did not answer in time for ${input.filename}`);
  if (error instanceof ConnectionError) return new UpstreamError(`cannot reach the Unstructured API at ${url}: ${error.message}`, { cause: error });
  if (error instanceof UnstructuredClientError) {
    const detail = detailOf(error);
    if ([400, 415, 422].includes(error.statusCode))
      return new BadRequestError(`Unstructured API refused ${input.filename} (${error.statusCode}): ${detail}`, { code: 'DOCUMENT_UNREADABLE' });
    if ([401, 403].includes(error.statusCode)) return new UpstreamError(`Unstructured API at ${url} refused the API key (${error.statusCode}): ${detail}`);
    return new UpstreamError(`Unstructured API at ${url} failed (${error.statusCode}): ${detail}`, { cause: error });
  }
  return new UpstreamError(`Unstructured API call failed: ${(error as Error).message}`, { cause: error });
}

/**
 * The client's own hooks without the two that write to the console on every
 * failed request (one of them announcing retries that are switched off):
 * the host reports failures itself, through its errors and structured logs.
 * PDF splitting, the other hook's job, is off anyway.
 */
function quietHooks(): SDKHooks {
  const hooks = new SDKHooks();
  const keep = (hook: object) => !(hook instanceof LoggerHook || hook instanceof SplitPdfHook);
  hooks.sdkInitHooks = hooks.sdkInitHooks.filter(keep);
  hooks.beforeRequestHooks = hooks.beforeRequestHooks.filter(keep);
  hooks.afterSuccessHooks = hooks.afterSuccessHooks.filter(keep);
  hooks.afterErrorHooks = hooks.afterErrorHooks.filter(keep);
  return hooks;
}

/**
 * The client hands its fetcher a whole `Request` (its signal carries the client's `timeoutMs` and the caller's
 * abort); the host's client takes a URL and options, so the request is taken apart.
 */
function hostFetcher(http: HttpClient) {
  return async (request: Request | string | URL, init?: RequestInit) => {
    if (!(request instanceof Request)) return http.fetch(request, { ...init, timeoutMs: Infinity });
    const body = request.body ? await request.arrayBuffer() : undefined;
    return http.fetch(request.url, { method: request.method, headers: request.headers, body, signal: request.signal, timeoutMs: Infinity });
  };
}

/**
 * Any content type through the Unstructured partition endpoint
 * (`POST /general/v0/general`, one multipart request per document; the
 * client-side PDF page splitting is off so a document is one request with one
 * timeout, and retries are left to the ingestion job).
 */
export class UnstructuredParser implements DocumentParser {
  private readonly client: UnstructuredClient;
  private readonly url: string;

  constructor(private readonly options: UnstructuredParserOptions) {
    this.url = options.url.replace(/\/+$/, '').replace(/\/general\/v0\/general$/, '');
    const sdkOptions: SDKOptions & { hooks: SDKHooks } = {
      serverURL: this.url,
      security: async () => ({ apiKeyAuth: options.apiKey() }),
      retryConfig: { strategy: 'none' },
      timeoutMs: options.timeoutMs,
      hooks: quietHooks(),
      httpClient: new HTTPClient({ fetcher: hostFetcher(options.http) }),
    };
    this.client = new UnstructuredClient(sdkOptions);
  }

  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    // A deadline of its own: the client's `timeoutMs` is an AbortSignal.timeout that only a Request's signal follows,
    // and a timeout signal nothing holds may be collected before it fires (a partition then waits for the server).
    const deadline = callDeadline(this.options.timeoutMs, options?.signal);
    let response: string | Record<string, unknown>[];
    try {
      response = await this.client.general.partition(
        {
          partitionParameters: {
            files: { content: input.data, fileName: input.filename },
            contentType: input.contentType.split(';')[0]!.trim(),
            // Each configured name is one of the client's Strategy values (checked here, where the client is loaded).
            strategy: this.options.strategy satisfies `${Strategy}` as Strategy,
            splitPdfPage: false,
          },
        },
        { signal: deadline.signal },
      );
    } catch (error) {
      throw hostError(error, input, this.url, options?.signal, deadline.timedOut);
    } finally {
      deadline.dispose();
    }
    if (!Array.isArray(response)) throw new UpstreamError(`Unstructured API at ${this.url} answered with ${typeof response}, not a JSON list of elements`);
    const elements = response.map((raw) => toElement(raw as UnstructuredElement));
    return parsedDocument(elements, { parser: 'unstructured', filename: input.filename, strategy: this.options.strategy });
  }
}
