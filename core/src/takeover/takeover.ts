import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { insertAudit } from '../services/audit.js';
import { decodeCursor, encodeCursor } from '../db/keyset-cursor.js';
import {
  MESSAGE_COLUMNS,
  presentMessage,
  presentSessionState,
  type MessageRow,
  type PresentedMessage,
  type SessionState,
  type SessionStateRow,
} from '../chat/messages.js';
import type { SessionBroadcast, SessionEvents, TakeoverEventView } from '../chat/session-events.js';
import type { Operator } from './operator.js';

type EventType = TakeoverEventView['event_type'];

interface LockedSession extends SessionStateRow {
  agent_type: string | null;
}

/** A stored takeover event: the view's fields under their column names. */
type EventRow = Omit<TakeoverEventView, 'event_id' | 'created_at'> & { id: string; created_at: Date };

const presentEvent = (e: EventRow): TakeoverEventView => ({
  event_id: e.id,
  session_id: e.session_id,
  event_type: e.event_type,
  operator_id: e.operator_id,
  operator_name: e.operator_name,
  admin_user_id: e.admin_user_id,
  previous_owner_id: e.previous_owner_id,
  message_id: e.message_id,
  channel: e.channel,
  created_at: e.created_at.toISOString(),
});

const SESSION_STATE_SELECT = `SELECT s.id, s.agent_id, s.status, a.human_takeover_enabled, a.agent_type, s.takeover_owner_id, s.takeover_owner_name,
  s.takeover_started_at, s.takeover_released_at, s.updated_at FROM chat_sessions s LEFT JOIN agents a ON a.id = s.agent_id`;

const SYSTEM_TEXT: Record<Exclude<EventType, 'manual_message'>, (name: string, previous: string | null) => string> = {
  takeover: (name) => `${name} took over the conversation`,
  force_takeover: (name, previous) => `${name} took over the conversation from ${previous}`,
  release: (name) => `${name} handed the conversation back to the AI`,
};

const contentRefused = (msg: string, type: string) => new ValidationError([{ loc: ['body', 'content'], msg, type }]);

/**
 * Human takeover (spec 3.1). Every transition locks the session row, so of
 * two operators taking over at once exactly one wins; the new state, the
 * durable event, the extra `system` message and the audit row commit
 * together, and only then are they broadcast.
 */
export class Takeover {
  constructor(
    private readonly db: Sequelize,
    private readonly events: SessionEvents,
    /** `[agent] message_max_length`: a human reply has the customer's limit, on every channel. */
    private readonly messageMaxLength: number,
  ) {}

  /** The session state (WebSocket `session`), or `undefined` for an unknown session. */
  async state(sessionId: string): Promise<SessionState | undefined> {
    const [row] = await this.db.query<LockedSession>(`${SESSION_STATE_SELECT} WHERE s.id = $1`, { bind: [sessionId], type: QueryTypes.SELECT });
    return row && presentSessionState(row);
  }

  /** The state of a session an anonymous client started (its id was issued by the server), else `undefined`. */
  async issuedState(sessionId: string): Promise<SessionState | undefined> {
    const [row] = await this.db.query<LockedSession>(`${SESSION_STATE_SELECT} WHERE s.id = $1 AND s.issued_publicly`, {
      bind: [sessionId],
      type: QueryTypes.SELECT,
    });
    return row && presentSessionState(row);
  }

  /**
   * Opens a session for an anonymous client of `agentId`, under an id the server issues (see `issueSessionId`).
   */
  async issue(sessionId: string, agentId: string): Promise<SessionState> {
    await this.db.query(
      "INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', true, now(), now())",
      { bind: [sessionId, agentId] },
    );
    return (await this.state(sessionId))!;
  }

  /**
   * The state of a session a WebSocket client joins; an unknown session is
   * created bound to `agentId` (so it can be taken over before its first
   * message), and stays unknown without one.
   */
  async open(sessionId: string, agentId: string | null): Promise<SessionState | undefined> {
    if (agentId) {
      await this.db.query(
        "INSERT INTO chat_sessions (id, agent_id, status, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', now(), now()) ON CONFLICT (id) DO NOTHING",
        { bind: [sessionId, agentId] },
      );
    }
    return this.state(sessionId);
  }

  /** `AI_ACTIVE` -> `HUMAN_ACTIVE`; a session another operator owns needs `force` (recorded as `force_takeover`). */
  async takeover(sessionId: string, operator: Operator, force: boolean): Promise<SessionState> {
    return this.transition(sessionId, operator, (session) => {
      if (session.agent_type !== 'chat' || !session.human_takeover_enabled) {
        throw new ConflictError(`session ${sessionId} belongs to an agent without human takeover; enable human_takeover_enabled on a chat agent`, {
          code: 'TAKEOVER_NOT_ENABLED',
        });
      }
      if (session.status !== 'HUMAN_ACTIVE') return 'takeover';
      if (session.takeover_owner_id === operator.operator_id) return undefined;
      if (!force)
        throw new ConflictError(
          `session ${sessionId} is already taken over by ${session.takeover_owner_name ?? session.takeover_owner_id}; send force=true to take it over`,
          { code: 'SESSION_TAKEN_OVER' },
        );
      return 'force_takeover';
    });
  }

  /** `HUMAN_ACTIVE` -> `AI_ACTIVE`, by the owner (another operator needs `force`). */
  async release(sessionId: string, operator: Operator, force: boolean): Promise<SessionState> {
    return this.transition(sessionId, operator, (session) => {
      if (session.status !== 'HUMAN_ACTIVE')
        throw new ConflictError(`session ${sessionId} is not taken over; nothing to release`, { code: 'SESSION_NOT_TAKEN_OVER' });
      if (session.takeover_owner_id !== operator.operator_id && !force) {
        throw new ConflictError(
          `session ${sessionId} is owned by ${session.takeover_owner_name ?? session.takeover_owner_id}; only the owner releases it, or send force=true`,
          { code: 'SESSION_TAKEN_OVER' },
        );
      }
      return 'release';
    });
  }

  /** A human reply from the active owner: a message with role `agent`; no turn or context snapshot. */
  async manualMessage(sessionId: string, operator: Operator, content: string): Promise<PresentedMessage> {
    if (content.trim() === '') throw contentRefused('content is empty', 'empty');
    if (content.length > this.messageMaxLength) {
      throw contentRefused(`content is ${content.length} characters; the limit is ${this.messageMaxLength}`, 'too_long');
    }
    const { message, event } = await this.db.transaction(async (transaction) => {
      const session = await this.lock(sessionId, transaction);
      if (session.status !== 'HUMAN_ACTIVE')
        throw new ConflictError(`session ${sessionId} is not taken over; take it over before replying by hand`, { code: 'SESSION_NOT_TAKEN_OVER' });
      if (session.takeover_owner_id !== operator.operator_id) {
        throw new ConflictError(
          `only the operator who took over session ${sessionId} (${session.takeover_owner_name ?? session.takeover_owner_id}) replies by hand`,
          { code: 'SESSION_TAKEN_OVER' },
        );
      }
      const [row] = await this.db.query<MessageRow>(
        `INSERT INTO chat_messages (id, session_id, role, content, message_type, sender_id_snapshot, sender_name_snapshot, created_at)
         VALUES ($1, $2, 'agent', $3, 'user_chat', $4, $5, now()) RETURNING ${MESSAGE_COLUMNS}`,
        { bind: [randomUUID(), sessionId, content, operator.operator_id, operator.operator_name], type: QueryTypes.SELECT, transaction },
      );
      await this.db.query('UPDATE chat_sessions SET updated_at = now() WHERE id = $1', { bind: [sessionId], transaction });
      const event = await this.recordEvent(transaction, sessionId, 'manual_message', operator, null, row!.id);
      return { message: presentMessage(row!), event };
    });
    this.events.publish({ type: 'message', session_id: sessionId, message }, { type: 'takeover_event', session_id: sessionId, event });
    return message;
  }

  /** The durable takeover event stream, oldest first. */
  async listEvents(sessionId: string, options: { limit: number; cursor?: string }) {
    const [row] = await this.db.query('SELECT 1 FROM chat_sessions WHERE id = $1', { bind: [sessionId], type: QueryTypes.SELECT });
    if (!row) throw new NotFoundError(`session ${sessionId} not found`, { code: 'SESSION_NOT_FOUND' });
    const [cursorAt, cursorId] = decodeCursor(options.cursor);
    const rows = await this.db.query<EventRow>(
      `SELECT * FROM session_takeover_events WHERE session_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id::text) > ($2::timestamptz, $3::text))
       ORDER BY created_at, id LIMIT $4`,
      { bind: [sessionId, cursorAt, cursorId, options.limit + 1], type: QueryTypes.SELECT },
    );
    const page = rows.slice(0, options.limit);
    return {
      items: page.map(presentEvent),
      next_cursor: rows.length > options.limit ? encodeCursor(page.at(-1)!.created_at, page.at(-1)!.id) : null,
      limit: options.limit,
    };
  }

  /** Locks the session, decides the event (`undefined`: already in the wanted state), applies and broadcasts it. */
  private async transition(
    sessionId: string,
    operator: Operator,
    decide: (session: LockedSession) => Exclude<EventType, 'manual_message'> | undefined,
  ): Promise<SessionState> {
    const outcome = await this.db.transaction(async (transaction) => {
      const session = await this.lock(sessionId, transaction);
      const eventType = decide(session);
      if (!eventType) return { state: presentSessionState(session), broadcasts: [] };
      const taking = eventType !== 'release';
      const [updated] = await this.db.query<SessionStateRow>(
        `UPDATE chat_sessions SET status = $2, takeover_owner_id = $3, takeover_owner_name = $4, takeover_owner_admin_user_id = $5,
                takeover_started_at = CASE WHEN $6 THEN now() ELSE takeover_started_at END,
                takeover_released_at = CASE WHEN $6 THEN NULL ELSE now() END, updated_at = now()
         WHERE id = $1 RETURNING id, agent_id, status, takeover_owner_id, takeover_owner_name, takeover_started_at, takeover_released_at, updated_at`,
        {
          bind: [
            sessionId,
            taking ? 'HUMAN_ACTIVE' : 'AI_ACTIVE',
            taking ? operator.operator_id : null,
            taking ? operator.operator_name : null,
            taking ? operator.admin_user_id : null,
            taking,
          ],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      const state = presentSessionState({ ...updated!, human_takeover_enabled: session.human_takeover_enabled });
      const text = SYSTEM_TEXT[eventType](operator.operator_name ?? operator.operator_id, session.takeover_owner_name ?? session.takeover_owner_id);
      const [system] = await this.db.query<MessageRow>(
        `INSERT INTO chat_messages (id, session_id, role, content, sender_id_snapshot, sender_name_snapshot, metadata, created_at)
         VALUES ($1, $2, 'system', $3, $4, $5, $6, now()) RETURNING ${MESSAGE_COLUMNS}`,
        {
          bind: [randomUUID(), sessionId, text, operator.operator_id, operator.operator_name, JSON.stringify({ status: state.status, event_type: eventType })],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      const event = await this.recordEvent(
        transaction,
        sessionId,
        eventType,
        operator,
        eventType === 'force_takeover' ? session.takeover_owner_id : null,
        null,
      );
      const broadcasts: SessionBroadcast[] = [
        { type: 'session', session_id: sessionId, session: state },
        { type: 'system', session_id: sessionId, status: state.status, event_type: eventType, message: presentMessage(system!) },
        { type: 'takeover_event', session_id: sessionId, event },
      ];
      return { state, broadcasts };
    });
    this.events.publish(...outcome.broadcasts);
    return outcome.state;
  }

  private async lock(sessionId: string, transaction: Transaction): Promise<LockedSession> {
    const [session] = await this.db.query<LockedSession>(`${SESSION_STATE_SELECT} WHERE s.id = $1 FOR UPDATE OF s`, {
      bind: [sessionId],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!session) throw new NotFoundError(`session ${sessionId} not found`, { code: 'SESSION_NOT_FOUND' });
    return session;
  }

  /** The durable event and its administrator audit row, in the transition's transaction. */
  private async recordEvent(
    transaction: Transaction,
    sessionId: string,
    eventType: EventType,
    operator: Operator,
    previousOwner: string | null,
    messageId: string | null,
  ): Promise<TakeoverEventView> {
    const [row] = await this.db.query<EventRow>(
      `INSERT INTO session_takeover_events (id, session_id, event_type, operator_id, operator_name, admin_user_id, previous_owner_id, message_id, channel, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now()) RETURNING *`,
      {
        bind: [
          randomUUID(),
          sessionId,
          eventType,
          operator.operator_id,
          operator.operator_name,
          operator.admin_user_id,
          previousOwner,
          messageId,
          operator.channel,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    await insertAudit(
      this.db,
      'core.takeover',
      {
        action: `session.${eventType}`,
        outcome: 'success',
        actor_id: operator.admin_user_id ?? undefined,
        target_type: 'chat_session',
        target_id: sessionId,
        payload: { operator_id: operator.operator_id, channel: operator.channel, ...(previousOwner && { previous_owner_id: previousOwner }) },
      },
      { transaction, client_ip: operator.client_ip ?? null },
    );
    return presentEvent(row!);
  }
}
