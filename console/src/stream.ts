import { createParser } from 'eventsource-parser';
import type { components } from '@agent-host/client';
import { asApiError, fetchRenewing } from './api';

export type StreamEvent = components['schemas']['StreamEvent'];

/** What `POST /stream` takes (the host's schema): a message, the agent, and the session to go on with. */
export interface TurnRequest {
  agent_id: string;
  message: string;
  thread_id?: string;
}

/**
 * Sends one chat turn and hands each server-sent event to `onEvent` as it arrives, so a token is rendered in the frame
 * it came in. A refusal before the stream starts (a 4xx with the host's JSON error) is thrown as its ApiError.
 */
export async function streamTurn(body: TurnRequest, onEvent: (event: StreamEvent) => void, signal?: AbortSignal): Promise<void> {
  const response = await fetchRenewing(
    new Request(new URL('/stream', window.location.origin), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    }),
  );
  if (!response.ok || !response.body) {
    const error: unknown = await response.json().catch(() => undefined);
    throw asApiError(error, response.status);
  }
  const parser = createParser({ onEvent: (message) => onEvent(JSON.parse(message.data) as StreamEvent) });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parser.feed(decoder.decode(value, { stream: true }));
  }
}
