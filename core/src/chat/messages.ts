/** A `chat_messages` row as read from Postgres. */
export interface MessageRow {
  id: string;
  session_id: string;
  role: string;
  content: string;
  message_type: string | null;
  turn_id: string | null;
  sender_id_snapshot: string | null;
  sender_name_snapshot: string | null;
  metadata: Record<string, unknown> | null;
  created_at: Date | string;
}

/** The columns every message read selects, in the shape of {@link MessageRow}. */
export const MESSAGE_COLUMNS = 'id, session_id, role, content, message_type, turn_id, sender_id_snapshot, sender_name_snapshot, metadata, created_at';

/** A message as the API shows it: REST history, WebSocket `history` and `message` (spec 2.2). */
export function presentMessage(m: MessageRow) {
  return {
    message_id: m.id,
    session_id: m.session_id,
    role: m.role,
    content: m.content,
    message_type: m.message_type,
    turn_id: m.turn_id,
    sender_id_snapshot: m.sender_id_snapshot,
    sender_name_snapshot: m.sender_name_snapshot,
    metadata: m.metadata,
    created_at: new Date(m.created_at).toISOString(),
  };
}

export type PresentedMessage = ReturnType<typeof presentMessage>;

/** A `chat_sessions` row with its agent's takeover flag. */
export interface SessionStateRow {
  id: string;
  agent_id: string | null;
  status: string;
  human_takeover_enabled: boolean | null;
  takeover_owner_id: string | null;
  takeover_owner_name: string | null;
  takeover_started_at: Date | string | null;
  takeover_released_at: Date | string | null;
  updated_at: Date | string;
}

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** Session state (spec 2.2): the WebSocket `session` message and the takeover fields of list items. */
export function presentSessionState(s: SessionStateRow) {
  return {
    session_id: s.id,
    agent_id: s.agent_id,
    status: s.status,
    human_takeover_enabled: s.human_takeover_enabled ?? false,
    takeover_owner_id: s.takeover_owner_id,
    takeover_owner_name: s.takeover_owner_name,
    takeover_started_at: iso(s.takeover_started_at),
    takeover_released_at: iso(s.takeover_released_at),
    updated_at: iso(s.updated_at),
  };
}

export type SessionState = ReturnType<typeof presentSessionState>;
