import { ConflictError, NotFoundError, ValidationError } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import { insertAudit } from '../services/audit-store.js';
import { decodeCursor, encodeCursor } from '../db/keyset-cursor.js';
import { presentMessage, presentSessionState, type PresentedMessage, type SessionState } from '../chat/messages.js';
import type { SessionBroadcast, SessionEvents, TakeoverEventView } from '../chat/session-events.js';
import type { BudgetBuckets, RateLimitRefusal } from '../chat/traffic-limits.js';
import type { Operator } from './operator.js';
import { TakeoverStore, type EventRow, type TakeoverSessionRow } from './takeover-store.js';

type EventType = TakeoverEventView['event_type'];

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
  private readonly store: TakeoverStore;

  constructor(
    /** For the audit rows each transition writes. */
    private readonly db: Sequelize,
    private readonly events: SessionEvents,
    /** `[agent] message_max_length`: a human reply has the customer's limit, on every channel. */
    private readonly messageMaxLength: number,
  ) {
    this.store = new TakeoverStore(db);
  }

  /** The session state (WebSocket `session`), or `undefined` for an unknown session. */
  async state(sessionId: string): Promise<SessionState | undefined> {
    const row = await this.store.session(sessionId);
    return row && presentSessionState(row);
  }

  /** What a socket joining the session is sent: its latest `limit` messages and its state, read together. */
  async joined(sessionId: string, limit: number): Promise<{ messages: PresentedMessage[]; session: SessionState | undefined }> {
    const { session, messages } = await this.store.sessionWithHistory(sessionId, limit);
    return { messages: messages.map(presentMessage), session: session && presentSessionState(session) };
  }

  /** The state of a session an anonymous client started (its id was issued by the server), else `undefined`. */
  async issuedState(sessionId: string): Promise<SessionState | undefined> {
    const row = await this.store.session(sessionId, { issuedOnly: true });
    return row && presentSessionState(row);
  }

  /**
   * {@link issuedState}, read in the statement that takes a customer socket's handshake budget (the buckets and
   * refusal of `TrafficLimits.handshakeBuckets`), with what {@link joined} reads: the refusal, if the budget refused
   * the handshake, else the state and, for a session the server issued, its latest `limit` messages.
   */
  async issuedJoining(
    sessionId: string,
    handshake: BudgetBuckets,
    limit: number,
  ): Promise<
    | { refusal: RateLimitRefusal; state?: undefined; messages?: undefined }
    | { refusal?: undefined; state: SessionState | undefined; messages: PresentedMessage[] }
  > {
    const { buckets, session, messages } = await this.store.issuedSessionJoining(sessionId, handshake.buckets, limit);
    return handshake.refusal(buckets) ?? { state: session && presentSessionState(session), messages: messages.map(presentMessage) };
  }

  /**
   * Opens a session for an anonymous client of `agentId`, under an id the server issues (see `issueSessionId`).
   */
  async issue(sessionId: string, agentId: string): Promise<SessionState> {
    await this.store.insertIssued(sessionId, agentId);
    return (await this.state(sessionId))!;
  }

  /**
   * The state of a session a WebSocket client joins; an unknown session is
   * created bound to `agentId` (so it can be taken over before its first
   * message), and stays unknown without one.
   */
  async open(sessionId: string, agentId: string | null): Promise<SessionState | undefined> {
    if (agentId) await this.store.ensure(sessionId, agentId);
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
    const { message, event } = await this.store.transaction(async (transaction) => {
      const session = await this.lock(sessionId, transaction);
      if (session.status !== 'HUMAN_ACTIVE')
        throw new ConflictError(`session ${sessionId} is not taken over; take it over before replying by hand`, { code: 'SESSION_NOT_TAKEN_OVER' });
      if (session.takeover_owner_id !== operator.operator_id) {
        throw new ConflictError(
          `only the operator who took over session ${sessionId} (${session.takeover_owner_name ?? session.takeover_owner_id}) replies by hand`,
          { code: 'SESSION_TAKEN_OVER' },
        );
      }
      const row = await this.store.insertOperatorMessage(sessionId, operator, content, transaction);
      const event = await this.recordEvent(transaction, sessionId, 'manual_message', operator, null, row.id);
      return { message: presentMessage(row), event };
    });
    this.events.publish({ type: 'message', session_id: sessionId, message }, { type: 'takeover_event', session_id: sessionId, event });
    return message;
  }

  /** The durable takeover event stream, oldest first. */
  async listEvents(sessionId: string, options: { limit: number; cursor?: string }) {
    if (!(await this.store.sessionExists(sessionId))) throw new NotFoundError(`session ${sessionId} not found`, { code: 'SESSION_NOT_FOUND' });
    const rows = await this.store.events(sessionId, decodeCursor(options.cursor), options.limit);
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
    decide: (session: TakeoverSessionRow) => Exclude<EventType, 'manual_message'> | undefined,
  ): Promise<SessionState> {
    const outcome = await this.store.transaction(async (transaction) => {
      const session = await this.lock(sessionId, transaction);
      const eventType = decide(session);
      if (!eventType) return { state: presentSessionState(session), broadcasts: [] };
      const taking = eventType !== 'release';
      const updated = await this.store.setOwner(sessionId, taking ? operator : null, transaction);
      const state = presentSessionState({ ...updated, human_takeover_enabled: session.human_takeover_enabled });
      const text = SYSTEM_TEXT[eventType](operator.operator_name ?? operator.operator_id, session.takeover_owner_name ?? session.takeover_owner_id);
      const system = await this.store.insertSystemMessage(sessionId, operator, text, { status: state.status, event_type: eventType }, transaction);
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
        { type: 'system', session_id: sessionId, status: state.status, event_type: eventType, message: presentMessage(system) },
        { type: 'takeover_event', session_id: sessionId, event },
      ];
      return { state, broadcasts };
    });
    this.events.publish(...outcome.broadcasts);
    return outcome.state;
  }

  private async lock(sessionId: string, transaction: Transaction): Promise<TakeoverSessionRow> {
    const session = await this.store.session(sessionId, { transaction });
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
    const row = await this.store.insertEvent(sessionId, { type: eventType, operator, previousOwner, messageId }, transaction);
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
    return presentEvent(row);
  }
}
