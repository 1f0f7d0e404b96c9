import { useEffect, useState } from 'react';
import { io } from 'socket.io-client';
import type { components, paths } from '@agent-host/client';

export type Message = components['schemas']['Message'];
export type SessionListItem = paths['/sessions']['get']['responses'][200]['content']['application/json']['items'][number];
/** What the `session` event carries: the list item's state, without the agent's name. */
export type SessionState = Omit<SessionListItem, 'agent_name' | 'created_at'>;

export interface LiveSession {
  connected: boolean;
  /** Why the server refused or closed the socket, in its words. */
  refusal?: string;
  messages: Message[];
  state?: SessionState;
  /** The turn of a grounded agent that could not answer and told the customer a person will follow up. */
  handoff?: { turn_id: string; reason: string; created_at: string };
  /** Bumped on every takeover event, for the page to read the event list again. */
  takeoverEvents: number;
}

/** Messages by id in the order they were stored: a reconnect's `history` and live events may overlap, never repeat. */
function merge(known: Message[], incoming: Message[]): Message[] {
  const byId = new Map(known.map((m) => [m.message_id, m]));
  for (const message of incoming) byId.set(message.message_id, message);
  return [...byId.values()].sort((a, b) => a.created_at.localeCompare(b.created_at));
}

/**
 * A session's live view over socket.io (`/ws/{session_id}`, with the login cookie): `history` on every connect, then
 * each stored message, the session's state after each takeover or release, and handoff requests. socket.io
 * reconnects by itself; the history it sends again is merged by message id, so nothing shows twice.
 */
export function useLiveSession(sessionId: string): LiveSession {
  const [live, setLive] = useState<LiveSession>({ connected: false, messages: [], takeoverEvents: 0 });
  useEffect(() => {
    setLive({ connected: false, messages: [], takeoverEvents: 0 });
    const socket = io(`${window.location.origin}/ws/${encodeURIComponent(sessionId)}`, { transports: ['websocket'], withCredentials: true });
    socket.on('connect', () => setLive((l) => ({ ...l, connected: true, refusal: undefined })));
    socket.on('disconnect', () => setLive((l) => ({ ...l, connected: false })));
    socket.on('connect_error', (error: Error) => setLive((l) => ({ ...l, connected: false, refusal: error.message })));
    socket.on('history', (event: { messages: Message[] }) => setLive((l) => ({ ...l, messages: merge(l.messages, event.messages) })));
    socket.on('message', (event: { message: Message }) => setLive((l) => ({ ...l, messages: merge(l.messages, [event.message]) })));
    socket.on('system', (event: { message: Message }) => setLive((l) => ({ ...l, messages: merge(l.messages, [event.message]) })));
    socket.on('session', (state: SessionState) => setLive((l) => ({ ...l, state })));
    socket.on('takeover_event', () => setLive((l) => ({ ...l, takeoverEvents: l.takeoverEvents + 1 })));
    socket.on('handoff_requested', (event: { handoff: LiveSession['handoff'] }) => setLive((l) => ({ ...l, handoff: event.handoff })));
    socket.on('error', (event: { detail?: string }) => setLive((l) => ({ ...l, refusal: event.detail })));
    return () => {
      socket.close();
    };
  }, [sessionId]);
  return live;
}
