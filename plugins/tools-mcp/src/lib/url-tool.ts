import type { ToolDescriptor } from '@agent-host/sdk';
import type { GuardedFetch } from './mcp-connection.js';

/** `http_sse` with `import_mode=url`: one plain HTTP endpoint offered as one tool. */
export interface UrlTool {
  url: string;
  method: 'GET' | 'POST';
  toolName: string;
  headers: Record<string, string>;
}

/** An HTTP answer, with its body parsed as JSON when it is JSON. */
export interface UrlToolResponse {
  status: number;
  ok: boolean;
  body: unknown;
}

/** Where the tool points, without query or credentials (which may hold secrets). */
function endpoint(tool: UrlTool): string {
  const url = new URL(tool.url);
  return `${url.origin}${url.pathname}`;
}

export function urlToolDescriptor(tool: UrlTool): ToolDescriptor {
  const how = tool.method === 'GET' ? 'as query parameters of GET' : 'as a JSON body of POST';
  return {
    name: tool.toolName,
    description: `Sends its arguments ${how} ${endpoint(tool)} and returns the response.`,
    input_schema: { type: 'object', additionalProperties: true },
  };
}

/**
 * Calls the endpoint: GET puts each argument in the query string (strings as
 * they are, other values as JSON), POST sends the arguments as a JSON object.
 */
export async function callUrlTool(tool: UrlTool, args: Record<string, unknown>, signal: AbortSignal, fetch: GuardedFetch): Promise<UrlToolResponse> {
  const url = new URL(tool.url);
  const headers = new Headers(tool.headers);
  let body: string | undefined;
  if (tool.method === 'GET') {
    for (const [name, value] of Object.entries(args)) {
      if (value !== undefined && value !== null) url.searchParams.append(name, typeof value === 'string' ? value : JSON.stringify(value));
    }
  } else {
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    body = JSON.stringify(args);
  }
  const response = await fetch(url, { method: tool.method, headers, body, signal });
  const text = await response.text();
  return { status: response.status, ok: response.ok, body: parseBody(text) };
}

/**
 * Health of a plain URL: a HEAD request, which has no side effects. Any answer
 * below 500 means the endpoint is there (many APIs answer HEAD with 405).
 */
export async function probeUrlTool(tool: UrlTool, signal: AbortSignal, fetch: GuardedFetch): Promise<{ ok: boolean; message: string }> {
  const response = await fetch(tool.url, { method: 'HEAD', headers: tool.headers, signal });
  return { ok: response.status < 500, message: `HEAD ${endpoint(tool)} answered HTTP ${response.status}` };
}

function parseBody(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
