import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Deadline } from './deadline.js';
import { ProcessGroupStdioTransport, type StdioLaunch } from './stdio-transport.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
const CLIENT_INFO = { name: 'agent-host', version };

/** How to reach an MCP server. */
export type McpTarget =
  { kind: 'stdio'; launch: StdioLaunch } | { kind: 'http'; url: string; headers: Record<string, string>; transport: 'auto' | 'streamable_http' | 'sse' };

/** The wire an open connection runs over; `auto` resolves to one of the HTTP two. */
export type McpWire = 'stdio' | 'streamable_http' | 'sse';

/** A connected, initialised MCP client. */
export interface McpConnection {
  readonly client: Client;
  readonly wire: McpWire;
  /** The stdio server's process id. */
  readonly pid?: number;
  /** For stdio, how the process ended; empty otherwise. */
  diagnosis(): string;
  close(): Promise<void>;
}

/**
 * Opens and initialises a connection within `deadline`. A failed or
 * abandoned attempt is closed before this rejects, so no child is left behind.
 * `onDead` runs whenever the open connection closes, whoever closed it.
 */
/** How HTTP targets are fetched: the host's guarded fetch for URLs from the API (`HttpClient.fetchUntrusted`). */
export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

export async function openConnection(target: McpTarget, deadline: Deadline, onDead: () => void, guardedFetch: GuardedFetch): Promise<McpConnection> {
  if (target.kind === 'stdio') {
    const transport = new ProcessGroupStdioTransport(target.launch);
    try {
      const client = await connect(transport, deadline, onDead);
      return { client, wire: 'stdio', pid: transport.pid, diagnosis: () => transport.diagnosis(), close: () => client.close() };
    } catch (error) {
      throw withDiagnosis(error, transport.diagnosis(), deadline);
    }
  }
  const url = new URL(target.url);
  const requestInit = { headers: target.headers };
  let current: Transport | undefined;
  let brokeOff = '';
  const fetch = watchedFetch(guardedFetch, (error) => {
    brokeOff ||= `an answer broke off: ${error.message}`;
    void current?.close();
  });
  const diagnosis = () => brokeOff;
  if (target.transport !== 'sse') {
    try {
      const client = await connect((current = new StreamableHTTPClientTransport(url, { requestInit, fetch })), deadline, onDead);
      return { client, wire: 'streamable_http', diagnosis, close: () => client.close() };
    } catch (error) {
      if (target.transport === 'streamable_http' || !servesOnlySse(error)) throw error;
    }
  }
  const client = await connect((current = new SSEClientTransport(url, { requestInit, fetch, eventSourceInit: { fetch } })), deadline, onDead);
  return { client, wire: 'sse', diagnosis, close: () => client.close() };
}

/**
 * `fetch` whose response bodies report an error mid-way (past `[http] max_response_bytes`, a dropped connection) to
 * `onBroken`. The SDK only logs such an error, so the calls waiting on that answer would wait for their timeout;
 * ending the connection fails them at once, with the reason. Aborts are the connection's own doing and not reported.
 */
function watchedFetch(fetch: GuardedFetch, onBroken: (error: Error) => void): GuardedFetch {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    // A read still pending when the reader is cancelled settles afterwards, on a controller that is closed by then.
    let cancelled = false;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (error) {
          if (cancelled) return;
          if (!(error instanceof Error && error.name === 'AbortError')) onBroken(error instanceof Error ? error : new Error(String(error)));
          controller.error(error);
          return;
        }
        if (cancelled) return;
        if (chunk.done) controller.close();
        else controller.enqueue(chunk.value);
      },
      cancel(reason) {
        cancelled = true;
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** `error` with how a stdio server ended appended, once it has ended; a timeout stays as it is. */
export function withDiagnosis(error: unknown, diagnosis: string, deadline: Deadline): unknown {
  if (!diagnosis || deadline.timedOut(error)) return error;
  return new Error(`${error instanceof Error ? error.message : String(error)} (${diagnosis})`, { cause: error });
}

/**
 * The MCP backwards-compatibility rule: a 4xx to the Streamable HTTP POST
 * means an older server that speaks the SSE transport at that URL. 401 and
 * 403 are left as they are: the credential is wrong either way.
 */
function servesOnlySse(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code !== undefined && error.code >= 400 && error.code < 500 && error.code !== 401 && error.code !== 403;
}

async function connect(transport: Transport, deadline: Deadline, onDead: () => void): Promise<Client> {
  // The host is a client only: it offers no sampling, roots or elicitation.
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  try {
    await deadline.race(client.connect(transport, deadline.requestOptions()));
  } catch (error) {
    await client.close().catch(() => undefined);
    throw error;
  }
  client.onclose = onDead;
  return client;
}
