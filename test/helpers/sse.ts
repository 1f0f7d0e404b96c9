import { contractViolation, streamViolation } from './contract.js';

/** Reads a `text/event-stream` body into its `data:` events, in order. */
export async function readEvents(response: Response): Promise<{ type: string; content?: string }[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      if (!block.startsWith('data: ')) throw new Error(`not an SSE data event: ${JSON.stringify(block)}`);
      return JSON.parse(block.slice(6));
    });
}

/** POSTs to /stream and returns the status, content type and events, each checked against the host's /openapi.json. */
export async function stream(baseUrl: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${baseUrl}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const contentType = response.headers.get('content-type') ?? '';
  if (!contentType.startsWith('text/event-stream')) {
    const error = await response.json();
    const violation = contractViolation(baseUrl, 'POST', '/stream', response.status, contentType, error);
    if (violation) throw new Error(violation);
    return { status: response.status, contentType, events: [], body: error };
  }
  const events = await readEvents(response);
  const violation = streamViolation(baseUrl, 'POST', '/stream', response.status, events);
  if (violation) throw new Error(violation);
  return { status: response.status, contentType, events, body: undefined };
}

export const tokensOf = (events: { type: string; content?: string }[]) =>
  events
    .filter((e) => e.type === 'token')
    .map((e) => e.content)
    .join('');
