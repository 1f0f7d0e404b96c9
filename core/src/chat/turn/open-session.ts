import { randomUUID } from 'node:crypto';
import type { ChatMessage, MessageType } from '@agent-host/sdk';
import type { HostConfig } from '../../config/schema.js';
import type { ConversationStore, SessionRow } from '../conversation-store.js';
import { normalizeMessageType } from '../fixed-response.js';
import { presentMessage, type MessageRow } from '../messages.js';
import type { SessionEvents } from '../session-events.js';
import type { SessionTurns, TurnTicket } from '../session-turns.js';
import { issueSessionId, quotaCaller, refusal, type AdmittedTurn, type TurnIdentity } from './turn-request.js';

export interface SessionStageDeps {
  config: HostConfig;
  conversations: ConversationStore;
  events: SessionEvents;
  turns: SessionTurns;
}

/** A turn with its session open: the session, the history the runtime sees, and the turn's identity. */
export interface OpenTurn {
  session: SessionRow;
  history: ChatMessage[];
  messageType: MessageType;
  identity: TurnIdentity;
  /** The caller's counted turns today, read with the session for the quota (`null` without a caller or a quota). */
  callerTurnsToday: number | null;
  /** The turn's place in its session's line: the one taken at admission, or the one taken with a session it started. */
  ticket: TurnTicket | null;
}

/** Stored messages, shown at once to everyone watching the session. */
export function publishMessages(events: SessionEvents, sessionId: string, messages: MessageRow[]): void {
  events.publish(...messages.map((m) => ({ type: 'message' as const, session_id: sessionId, message: presentMessage(m) })));
}

/** {@link openTurnSession}'s answer while turns ahead of this one in the session's line may still run. */
export const BEHIND = Symbol('behind in the session line');

/**
 * Stage 2, resolve the session: opens (or starts) the request's session if this caller may use it. While a human
 * operator answers the session, the message is stored (by the statement opening the session, or a customer's at
 * admission) and shown, the AI stays silent and no turn runs: `null`. A session the request starts joins its line in
 * the same statement; `hold` gets that ticket at once, to leave it whatever happens next. A turn whose ticket is not
 * known to be first opens the session only if it is (in the same statement), else gets `BEHIND`: it waits its turn
 * and calls again.
 */
export async function openTurnSession(
  deps: SessionStageDeps,
  admitted: AdmittedTurn,
  traceId: string,
  hold: (ticket: TurnTicket) => void,
): Promise<OpenTurn | null | typeof BEHIND> {
  const { config, conversations } = deps;
  const { request, caller, agent, trusted } = admitted;
  const messageType = normalizeMessageType(request.message_type);
  const threadId = request.thread_id ?? issueSessionId();
  const mode = trusted ? 'choose' : caller.issuedSession || request.thread_id === undefined ? 'issue' : 'continue_issued';
  const line = admitted.ticket === null && caller.issuedSession ? deps.turns.lineFor(admitted.turnId) : null;
  // A scheduled run is not a customer's message: under a takeover it waits for the takeover to end (its runner defers it).
  const customerMessage = caller.channel === 'scheduled' ? null : { content: request.message, messageType, ticketId: admitted.ticket?.id ?? null };
  const firstIn = admitted.ticket?.unconfirmed ?? null;
  const opened =
    admitted.opened ??
    // The quota's count rides on the statement that opens the session: the limits stage needs no round trip of its own.
    (await conversations.openSession(threadId, agent?.agent_id ?? null, config.agent.history_message_limit, mode, {
      quotaCaller: quotaCaller(config, caller),
      line,
      firstIn,
      customerMessage,
    }));
  // Not first in the session's line, or refused: either way the turn waits its turn, then asks again without the check.
  if (!opened && firstIn) return BEHIND;
  if (!opened) {
    // The same words whether the session exists or not, so a refusal tells a guesser nothing.
    throw trusted
      ? refusal('SESSION_AGENT_MISMATCH', `session ${threadId} belongs to another agent; continue it through that agent`)
      : refusal('SESSION_NOT_FOUND', `no session ${threadId} of this agent was started by you; omit thread_id to start a new session`);
  }
  const { session, history, callerTurnsToday, ticketId, storedMessage } = opened;
  // What this instance saw of a customer's session, for the admission of its next message (`admitTurn`).
  if (mode === 'continue_issued') deps.turns.takeovers.note(session.id, session.status === 'HUMAN_ACTIVE');
  let ticket = admitted.ticket;
  if (ticketId !== null) {
    ticket = deps.turns.taken(session.id, ticketId, true);
    hold(ticket);
  }
  if (session.status === 'HUMAN_ACTIVE') {
    if (storedMessage) {
      admitted.ticket?.leftWithTurn();
      publishMessages(deps.events, session.id, [storedMessage]);
    }
    return null;
  }
  const identity: TurnIdentity = {
    turn_id: admitted.turnId,
    session_id: session.id,
    agent_id: agent?.agent_id ?? null,
    message_type: messageType,
    user_message: { id: randomUUID(), created_at: session.opened_at },
    user_text: request.message,
    caller_key: caller.callerKey,
    trace_id: traceId,
  };
  return { session, history, messageType, identity, callerTurnsToday, ticket };
}
