import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { preparedQuery } from '../db/prepared-query.js';
import { SKIP_FLUSH_WAIT } from '../db/skip-flush-wait.js';
import { SqlStore } from '../db/sql-store.js';
import { MESSAGE_COLUMNS, type MessageRow, type SessionStateRow } from '../chat/messages.js';
import type { TakeoverEventView } from '../chat/session-events.js';
import { BudgetGroupedCalls, GROUP_TAKEN_BUCKETS, groupedTake, groupedTakeRows, type BudgetedItem, type GroupedField } from '../chat/grouped-takes.js';
import { bucketTakes, takenBuckets, type BucketTake, type TakenBucket } from '../chat/traffic-limit-store.js';
import type { Operator } from './operator.js';

export interface TakeoverSessionRow extends SessionStateRow {
  agent_type: string | null;
}

/** A stored takeover event: the view's fields under their column names. */
export type EventRow = Omit<TakeoverEventView, 'event_id' | 'created_at'> & { id: string; created_at: Date };

const SESSION_STATE_SELECT = `SELECT s.id, s.agent_id, s.status, a.human_takeover_enabled, a.agent_type, s.takeover_owner_id, s.takeover_owner_name,
  s.takeover_started_at, s.takeover_released_at, s.updated_at FROM chat_sessions s LEFT JOIN agents a ON a.id = s.agent_id`;

/** The latest `limit` messages of session `session` (SQL expressions), oldest first, as a JSON array: a joining socket's history. */
const latestMessages = (session: string, limit: string) => `COALESCE((SELECT json_agg(m ORDER BY m.created_at, m.id) FROM (
  SELECT ${MESSAGE_COLUMNS} FROM chat_messages WHERE session_id = ${session} ORDER BY created_at DESC, id DESC LIMIT ${limit}) m), '[]')`;

const LATEST_MESSAGES = latestMessages('$1', '$2');

/** A customer socket's handshake, joining `sessionId` ({@link TakeoverStore.issuedSessionJoining}). */
interface Handshake extends BudgetedItem {
  sessionId: string;
  limit: number;
}

type Joining = { buckets: (TakenBucket | null)[]; session: TakeoverSessionRow | undefined; messages: MessageRow[] };

/** The fields of a handshake's row in {@link HANDSHAKES}. */
const HANDSHAKE_FIELDS: GroupedField<Handshake>[] = [
  ['id', 'varchar', (handshake) => handshake.sessionId],
  ['history_limit', 'int', (handshake) => handshake.limit],
];

/**
 * Customer sockets' handshakes (`HANDSHAKE_FIELDS`, a row of `u` each), as a lone one is read: their budgets taken
 * once for all of them (`groupedTake`), and for each the state of the session it joins, if the server issued it, and,
 * when the budget allowed the handshake, the session's latest messages. A row per handshake, in the order given.
 */
const HANDSHAKES = `WITH ${groupedTake(HANDSHAKE_FIELDS)}
  SELECT ${GROUP_TAKEN_BUCKETS}, ${SKIP_FLUSH_WAIT},
    (SELECT row_to_json(st) FROM (${SESSION_STATE_SELECT} WHERE s.id = u.id AND s.issued_publicly) st) AS session,
    CASE WHEN t.allowed[u.i] AND EXISTS (SELECT 1 FROM chat_sessions WHERE id = u.id AND issued_publicly) THEN ${latestMessages('u.id', 'u.history_limit')} END AS messages
  FROM u CROSS JOIN t
  ORDER BY u.i`;

/** The SQL of human takeover: session states, takeover events, and the messages operators add. */
export class TakeoverStore extends SqlStore {
  /** The session's state; only one the server issued publicly with `issuedOnly`; locked with a transaction. */
  async session(sessionId: string, options: { issuedOnly?: boolean; transaction?: Transaction } = {}): Promise<TakeoverSessionRow | undefined> {
    const where = `WHERE s.id = $1${options.issuedOnly ? ' AND s.issued_publicly' : ''}${options.transaction ? ' FOR UPDATE OF s' : ''}`;
    // Read at every WebSocket handshake: prepared once per connection.
    if (!options.transaction) {
      const [row] = await preparedQuery<TakeoverSessionRow>(
        this.db,
        `takeover-session${options.issuedOnly ? '-issued' : ''}`,
        `${SESSION_STATE_SELECT} ${where}`,
        [sessionId],
      );
      return row;
    }
    const [row] = await this.db.query<TakeoverSessionRow>(`${SESSION_STATE_SELECT} ${where}`, {
      bind: [sessionId],
      type: QueryTypes.SELECT,
      transaction: options.transaction,
    });
    return row;
  }

  /**
   * A customer socket's handshake in one round trip: one take of each of `buckets` (the address's handshake budget,
   * `bucketTakes`), the state of the session it joins if the server issued that session publicly, and then, when the
   * budget allowed the handshake, what the socket is sent first: the session's latest `limit` messages, oldest first.
   * Handshakes that come while one's statement runs share the next (`GROUPED_STATEMENTS`, {@link HANDSHAKES}): from one
   * address, each took and waited for the same bucket row's lock.
   */
  issuedSessionJoining(sessionId: string, buckets: BucketTake[], limit: number): Promise<Joining> {
    return this.handshakes.submit({ sessionId, limit, budgets: buckets });
  }

  /**
   * The statements of customer sockets' handshakes, one for each list of budgets ({@link issuedSessionJoining}). They
   * write nothing of a session, so handshakes to one session may share a statement: no key.
   */
  private readonly handshakes = new BudgetGroupedCalls((batch: Handshake[]) => this.joinings(batch));

  /** `handshakes`, drawing from the same budgets, in one statement ({@link HANDSHAKES}); a lone one in its own. */
  private async joinings(handshakes: Handshake[]): Promise<Joining[]> {
    if (handshakes.length === 1) {
      const [{ sessionId, budgets, limit }] = handshakes as [Handshake];
      return [await this.joining(sessionId, budgets, limit)];
    }
    const rows = await groupedTakeRows<Handshake, { session: TakeoverSessionRow | null; messages: MessageRow[] | null }>(
      this.db,
      'takeover-sessions-issued-joining',
      HANDSHAKES,
      handshakes,
      HANDSHAKE_FIELDS,
    );
    return rows.map((row) => ({ buckets: row.buckets, session: row.session ?? undefined, messages: row.messages ?? [] }));
  }

  /** A lone handshake, its budgets taken by upserts of their own (`bucketTakes`), as a lone turn's are. */
  private async joining(sessionId: string, buckets: BucketTake[], limit: number): Promise<Joining> {
    const values: unknown[] = [sessionId, limit];
    const { ctes, columns, allowed } = bucketTakes(buckets, (value) => `$${values.push(value)}`);
    const [row] = await preparedQuery<Record<string, unknown> & { session: TakeoverSessionRow | null; messages: MessageRow[] | null }>(
      this.db,
      `takeover-session-issued-joining-${buckets.length}`,
      `${ctes.length > 0 ? `WITH ${ctes.join(', ')} ` : ''}SELECT ${[...columns, SKIP_FLUSH_WAIT, ''].join(', ')}
         (SELECT row_to_json(st) FROM (${SESSION_STATE_SELECT} WHERE s.id = $1 AND s.issued_publicly) st) AS session,
         CASE WHEN ${allowed()} AND EXISTS (SELECT 1 FROM chat_sessions WHERE id = $1 AND issued_publicly) THEN ${LATEST_MESSAGES} END AS messages`,
      values,
    );
    return { buckets: takenBuckets(buckets.length, row!), session: row!.session ?? undefined, messages: row!.messages ?? [] };
  }

  /**
   * What a socket joining the session is sent, in one round trip: the session's state (none when it is gone) and its
   * latest `limit` messages, oldest first.
   */
  async sessionWithHistory(sessionId: string, limit: number): Promise<{ session: TakeoverSessionRow | undefined; messages: MessageRow[] }> {
    const [row] = await preparedQuery<{ session: TakeoverSessionRow | null; messages: MessageRow[] }>(
      this.db,
      'takeover-session-with-history',
      `SELECT (SELECT row_to_json(st) FROM (${SESSION_STATE_SELECT} WHERE s.id = $1) st) AS session, ${LATEST_MESSAGES} AS messages`,
      [sessionId, limit],
    );
    return { session: row!.session ?? undefined, messages: row!.messages };
  }

  async sessionExists(sessionId: string): Promise<boolean> {
    const [row] = await this.db.query('SELECT 1 FROM chat_sessions WHERE id = $1', { bind: [sessionId], type: QueryTypes.SELECT });
    return row !== undefined;
  }

  /** A new session under an id the server issued to an anonymous client. */
  async insertIssued(sessionId: string, agentId: string): Promise<void> {
    await this.db.query(
      "INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', true, now(), now())",
      { bind: [sessionId, agentId] },
    );
  }

  /** The session bound to `agentId`, unless it exists. */
  async ensure(sessionId: string, agentId: string): Promise<void> {
    await this.db.query(
      "INSERT INTO chat_sessions (id, agent_id, status, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', now(), now()) ON CONFLICT (id) DO NOTHING",
      { bind: [sessionId, agentId] },
    );
  }

  /** Hands the session to `owner` (`HUMAN_ACTIVE`), or back to the AI with `null`. */
  async setOwner(sessionId: string, owner: Operator | null, transaction: Transaction): Promise<SessionStateRow> {
    const [updated] = await this.db.query<SessionStateRow>(
      `UPDATE chat_sessions SET status = $2, takeover_owner_id = $3, takeover_owner_name = $4, takeover_owner_admin_user_id = $5,
              takeover_started_at = CASE WHEN $6 THEN now() ELSE takeover_started_at END,
              takeover_released_at = CASE WHEN $6 THEN NULL ELSE now() END, updated_at = now()
       WHERE id = $1 RETURNING id, agent_id, status, takeover_owner_id, takeover_owner_name, takeover_started_at, takeover_released_at, updated_at`,
      {
        bind: [
          sessionId,
          owner ? 'HUMAN_ACTIVE' : 'AI_ACTIVE',
          owner?.operator_id ?? null,
          owner?.operator_name ?? null,
          owner?.admin_user_id ?? null,
          owner !== null,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return updated!;
  }

  /** An operator's reply (role `agent`), which also marks the session updated. */
  async insertOperatorMessage(sessionId: string, operator: Operator, content: string, transaction: Transaction): Promise<MessageRow> {
    const [row] = await this.db.query<MessageRow>(
      `INSERT INTO chat_messages (id, session_id, role, content, message_type, sender_id_snapshot, sender_name_snapshot, created_at)
       VALUES ($1, $2, 'agent', $3, 'user_chat', $4, $5, now()) RETURNING ${MESSAGE_COLUMNS}`,
      { bind: [randomUUID(), sessionId, content, operator.operator_id, operator.operator_name], type: QueryTypes.SELECT, transaction },
    );
    await this.db.query('UPDATE chat_sessions SET updated_at = now() WHERE id = $1', { bind: [sessionId], transaction });
    return row!;
  }

  /** The `system` message a transition adds, with its state in `metadata`. */
  async insertSystemMessage(
    sessionId: string,
    operator: Operator,
    text: string,
    metadata: Record<string, unknown>,
    transaction: Transaction,
  ): Promise<MessageRow> {
    const [row] = await this.db.query<MessageRow>(
      `INSERT INTO chat_messages (id, session_id, role, content, sender_id_snapshot, sender_name_snapshot, metadata, created_at)
       VALUES ($1, $2, 'system', $3, $4, $5, $6, now()) RETURNING ${MESSAGE_COLUMNS}`,
      { bind: [randomUUID(), sessionId, text, operator.operator_id, operator.operator_name, JSON.stringify(metadata)], type: QueryTypes.SELECT, transaction },
    );
    return row!;
  }

  async insertEvent(
    sessionId: string,
    event: { type: TakeoverEventView['event_type']; operator: Operator; previousOwner: string | null; messageId: string | null },
    transaction: Transaction,
  ): Promise<EventRow> {
    const { operator } = event;
    const [row] = await this.db.query<EventRow>(
      `INSERT INTO session_takeover_events (id, session_id, event_type, operator_id, operator_name, admin_user_id, previous_owner_id, message_id, channel, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now()) RETURNING *`,
      {
        bind: [
          randomUUID(),
          sessionId,
          event.type,
          operator.operator_id,
          operator.operator_name,
          operator.admin_user_id,
          event.previousOwner,
          event.messageId,
          operator.channel,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return row!;
  }

  /** Events oldest first after the keyset cursor (`at`, `id`), one more than `limit` when another page follows. */
  events(sessionId: string, after: [string | null, string | null], limit: number): Promise<EventRow[]> {
    return this.db.query<EventRow>(
      `SELECT * FROM session_takeover_events WHERE session_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id::text) > ($2::timestamptz, $3::text))
       ORDER BY created_at, id LIMIT $4`,
      { bind: [sessionId, after[0], after[1], limit + 1], type: QueryTypes.SELECT },
    );
  }
}
