import type { ToolApprovalView } from '../mcp/pipeline/approval-view.js';
import type { PresentedMessage, SessionState } from './messages.js';

/** A takeover event as stored and broadcast (spec 2.2). */
export interface TakeoverEventView {
  event_id: string;
  session_id: string;
  event_type: 'takeover' | 'force_takeover' | 'release' | 'manual_message';
  operator_id: string;
  operator_name: string | null;
  admin_user_id: string | null;
  previous_owner_id: string | null;
  message_id: string | null;
  channel: 'rest' | 'websocket';
  created_at: string;
}

/** What happened in a session, for everyone watching it (WebSocket outgoing types of spec 6.2). */
export type SessionBroadcast =
  | { type: 'message'; session_id: string; message: PresentedMessage }
  | { type: 'session'; session_id: string; session: SessionState }
  | { type: 'system'; session_id: string; status: string; event_type: TakeoverEventView['event_type']; message: PresentedMessage }
  | { type: 'takeover_event'; session_id: string; event: TakeoverEventView }
  /** A tool call waiting for, or decided by, an operator (the approval checkpoint); sent to administrators only. */
  | { type: 'tool_approval'; session_id: string; approval: ToolApprovalView }
  /** A grounded agent could not answer and promised that a person follows up; sent to administrators only. */
  | { type: 'handoff_requested'; session_id: string; handoff: HandoffRequest };

/** A low-confidence handoff of a grounded agent (`low_confidence_behavior = "handoff"`): the turn and reply it came from. */
export interface HandoffRequest {
  turn_id: string;
  message_id: string | null;
  reason: 'no_evidence' | 'not_grounded' | null;
  created_at: string;
}

type Listener = (broadcast: SessionBroadcast) => void;

/**
 * The in-process bus between the services that change a session (chat,
 * takeover) and the transports that show it (the WebSocket gateway fans it
 * out to every instance). Publishing never fails the change that caused it.
 */
export class SessionEvents {
  private readonly listeners = new Set<Listener>();

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(...broadcasts: SessionBroadcast[]): void {
    for (const broadcast of broadcasts) for (const listener of this.listeners) listener(broadcast);
  }
}
