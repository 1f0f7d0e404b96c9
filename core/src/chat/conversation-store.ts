import { randomUUID } from 'node:crypto';
import type { ChatMessage, MessageType } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { GroupedCalls } from '../services/grouped-calls.js';
import { bindableJson, preparedQuery } from '../db/prepared-query.js';
import { SKIP_FLUSH_WAIT, skipFlushWaitUnless } from '../db/skip-flush-wait.js';
import { callerTurnsToday } from './request-limit-store.js';
import type { EstimatedCostSummary } from '../usage/cost.js';
import {
  GROUP_TAKEN_BUCKETS,
  GROUPED_STATEMENTS,
  BudgetGroupedCalls,
  groupedTake,
  groupedTakeRows,
  type BudgetedItem,
  type GroupedField,
} from './grouped-takes.js';
import { MESSAGE_COLUMNS, type MessageRow } from './messages.js';
import type { ModelOverride } from './model-router.js';
import { bucketTakes, takenBuckets, type BucketTake, type TakenBucket } from './traffic-limit-store.js';
import { joinLine, leaveLine } from './turn-queue-store.js';

export interface SessionRow {
  id: string;
  /** The database's time when the session was opened for this request (ISO 8601 with microseconds). */
  opened_at: string;
  agent_id: string | null;
  status: string;
  model_name: string | null;
  model_provider: string | null;
  model_temperature: number | null;
  /** The caller's IANA time zone, from the latest chat request that gave one. */
  time_zone: string | null;
}

/** Everything one turn writes: both messages, the turn row and its context snapshot. */
export interface TurnRecord {
  turn_id: string;
  session_id: string;
  agent_id: string | null;
  message_type: MessageType;
  /** The customer's message: its id and time are fixed when the turn starts, so it can be shown before it is stored. */
  user_message: { id: string; created_at: string };
  user_text: string;
  reply: string | null;
  /** The reply message's `metadata` (a grounded reply's citations), or null. */
  reply_metadata: Record<string, unknown> | null;
  orchestrator_key: string | null;
  response_source: string;
  status: 'completed' | 'failed' | 'aborted' | 'cancelled';
  error_message: string | null;
  model: { model_name: string; model_provider: string; model_temperature: number | null } | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; token_usage_source: string };
  /** The turn's estimated cost (spec 2.5), each model call priced at its own model. */
  cost: EstimatedCostSummary;
  counts_toward_limits: boolean;
  caller_key: string | null;
  trace_id: string;
  first_token_ms: number | null;
  latency_ms: number;
  context: Record<string, unknown>;
  /** A validated request override, stored on the session with the turn (never on the fixed-response path). */
  override: ModelOverride | null;
  /** The request's time zone, stored on the session with the turn. */
  time_zone: string | null;
  /** The turn's ticket in its session's line (`session-turns.ts`), left in the statement that stores the turn. */
  ticket_id: string | null;
}

export const OBSERVABILITY_SCHEMA_VERSION = 'v2';

/** Who may open which session (see {@link ConversationStore.openSession}). */
export type SessionMode = 'choose' | 'issue' | 'continue_issued';

/** The modes of a turn to a session it continues ({@link ConversationStore.admitToSession}). */
type AdmissionMode = Exclude<SessionMode, 'issue'>;

/** The columns of the session row a turn opens (`SessionRow`). */
const SESSION_COLUMNS = `id, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS opened_at, agent_id, status, model_name, model_provider, model_temperature, time_zone`;

/**
 * Opens the session in the way `mode` allows, returning its row (`SESSION_COLUMNS`) only then; `$1` is the session
 * id, `$2` the agent id. `gate` is a condition it must also meet (`TRUE` for none). `updated_at` moves when the turn
 * or a customer's message under takeover (`storesMessage`) is stored, not here: two indexes of `chat_sessions` hold
 * it, so writing it would give every turn a second row version with an entry in each index. An administrator's
 * existing session is still written (its row locked, its agent set if it had none), but as a HOT update, touching no
 * index, except to move `updated_at` for a message stored under takeover: a second update of the row in the same
 * statement would be lost.
 */
const OPEN_SESSION: Record<SessionMode, (gate: string, storesMessage: boolean) => string> = {
  choose: (
    gate,
    storesMessage,
  ) => `INSERT INTO chat_sessions (id, agent_id, status, created_at, updated_at) SELECT $1::varchar, $2::uuid, 'AI_ACTIVE', now(), now() WHERE ${gate}
         ON CONFLICT (id) DO UPDATE SET agent_id = COALESCE(chat_sessions.agent_id, EXCLUDED.agent_id)${
           storesMessage ? ", updated_at = CASE WHEN chat_sessions.status = 'HUMAN_ACTIVE' THEN now() ELSE chat_sessions.updated_at END" : ''
         }
         WHERE chat_sessions.agent_id IS NULL OR chat_sessions.agent_id = EXCLUDED.agent_id
         RETURNING ${SESSION_COLUMNS}`,
  // A session the server has just issued: nobody else knows it, so nothing is ahead of this request.
  issue: (gate) =>
    `INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at) SELECT $1::varchar, $2::uuid, 'AI_ACTIVE', true, now(), now() WHERE ${gate}
         RETURNING ${SESSION_COLUMNS}`,
  // `(agent_id = $2) IS TRUE`, the same test as `agent_id = $2` but one no index answers, so the row is found by its key
  // whatever the planner's statistics say: on a table not yet analyzed, it read every session of the agent instead.
  continue_issued: (gate) => `SELECT ${SESSION_COLUMNS} FROM chat_sessions WHERE id = $1 AND (agent_id = $2) IS TRUE AND issued_publicly AND ${gate}`,
};

/**
 * The columns read with an opened session, beside its row: its latest `limit` user and assistant messages (`history`,
 * newest last) and, when `quotaCaller` is not null, that caller's counted turns today. The arguments are SQL
 * expressions.
 */
const openedColumns = (session: string, limit: string, quotaCaller: string) => `COALESCE((
    SELECT json_agg(json_build_object('role', h.role, 'content', h.content) ORDER BY h.created_at, h.id)
    FROM (SELECT role, content, created_at, id FROM chat_messages
          WHERE session_id = ${session} AND role IN ('user', 'assistant', 'agent') ORDER BY created_at DESC, id DESC LIMIT ${limit}) h), '[]') AS history,
    CASE WHEN ${quotaCaller} IS NOT NULL THEN (${callerTurnsToday(quotaCaller)}) END AS caller_turns_today`;

/** A statement's row of an opened session: its `SESSION_COLUMNS`, {@link openedColumns} and its ticket, if any. */
type SessionRowWith = SessionRow & { history: { role: string; content: string }[]; caller_turns_today: string | null; ticket_id: string | null };

/** The session a row of {@link SessionRowWith} opened, with `ticketId` as its ticket. */
function openedSession(row: SessionRowWith, ticketId: string | null): OpenedSession {
  const { id, opened_at, agent_id, status, model_name, model_provider, model_temperature, time_zone, history, caller_turns_today } = row;
  return {
    session: { id, opened_at, agent_id, status, model_name, model_provider, model_temperature, time_zone },
    history: history.map((m) => ({ role: m.role === 'user' ? 'user' : 'assistant', content: m.content })),
    callerTurnsToday: caller_turns_today === null ? null : Number(caller_turns_today),
    ticketId,
    storedMessage: null,
  };
}

/** What may come with opening a session, in the same statement (see {@link ConversationStore.openSession}). */
export interface OpenSessionOptions {
  /** Counts this caller's turns today, for the daily quota. */
  quotaCaller: string | null;
  /**
   * Joins the session's line for this turn: a session this request starts, so nobody else can be in its line, or a
   * customer's message at admission ({@link ConversationStore.continueIssued}). With `customerMessage`, a message
   * stored at once takes no ticket: nothing follows it.
   */
  line?: { turnId: string; instanceId: string; seconds: number } | null;
  /** Opens the session only while no live ticket of its line is ahead of this one. */
  firstIn?: string | null;
  /**
   * Stores a customer's message that gets no AI reply when the session is under human takeover; the turn's ticket
   * (`ticketId`), if it has one, then leaves the line in the same statement: no turn follows. With `line`, only while
   * no live ticket is in the session's line: a message sent while an earlier one is answered waits its turn.
   */
  customerMessage?: { content: string; messageType: MessageType; ticketId: string | null } | null;
  /**
   * With `line`, the ticket is taken whatever the session (once the budgets allow it), and the session opened only
   * when that ticket is first (`ConversationStore.admitToSession`).
   */
  admission?: boolean;
}

/** A session opened for a turn (see {@link ConversationStore.openSession}). */
export interface OpenedSession {
  session: SessionRow;
  history: ChatMessage[];
  callerTurnsToday: number | null;
  ticketId: string | null;
  storedMessage: MessageRow | null;
}

/** Sessions, messages, turns and context snapshots in Postgres. */
export class ConversationStore {
  constructor(private readonly db: Sequelize) {}

  /**
   * The session of `threadId` and its latest `historyLimit` user and assistant messages, oldest first, in one round
   * trip (a human operator's replies count as the assistant's); `undefined` when `mode` refuses it:
   * - `choose` (administrators): created when unknown; a session keeps the first agent it was bound to and is
   *   continued only through that agent.
   * - `issue`: a new session under an id the server just issued, marked as started by an anonymous client.
   * - `continue_issued`: only such a session, and only through its own agent.
   *
   * The same statement does what `options` asks: it counts the caller's turns today (`callerTurnsToday`), joins the
   * line of a session this request starts (`ticketId`), opens the session only if the ticket `firstIn` is first in its
   * line (else `undefined`, as for a refusal: the caller waits its turn and asks again), and stores a customer's
   * message under human takeover (`storedMessage`), its ticket leaving the line.
   *
   * Its commit waits for the WAL flush only when it stored such a message, which is shown at once: whatever else it
   * writes (the session, a ticket) matters only with the turn the same request stores next, whose flush covers it
   * (`SKIP_FLUSH_WAIT`).
   */
  async openSession(
    threadId: string,
    agentId: string | null,
    historyLimit: number,
    mode: SessionMode,
    options: OpenSessionOptions,
  ): Promise<OpenedSession | undefined> {
    return (await this.open(threadId, agentId, historyLimit, mode, options, null)).opened;
  }

  /**
   * A new session under an id the server just issued (`issue`), opened in the statement that takes the turn's minute
   * budgets (`TrafficLimits.turnBuckets`), and only when every one of them allows the turn: the buckets after the take,
   * and the session if it opened, with its ticket when it joins its line (`line`). Nobody else knows the session, so
   * nothing is ahead of this request. Sessions issued while others are (`GROUPED_STATEMENTS`) share a statement, whose
   * commit does not wait for the WAL flush (`SKIP_FLUSH_WAIT`): a session matters only with the turn the same request
   * stores next, and that statement's flush covers it.
   */
  issueSession(
    threadId: string,
    agentId: string | null,
    historyLimit: number,
    options: Pick<OpenSessionOptions, 'quotaCaller' | 'line'>,
    budgets: BucketTake[],
  ): Promise<IssuedSession> {
    return this.issues.submit({ threadId, agentId, historyLimit, options, budgets });
  }

  /** The statements issuing sessions, one for each list of budgets their turns draw from ({@link issueSession}). */
  private readonly issues = new BudgetGroupedCalls((batch: SessionAdmission[]) => this.issueSessions(batch), bySession);

  /** `issues`, of different sessions and the same budgets, in one statement: a row of {@link ADMISSION_FIELDS} each. */
  private async issueSessions(issues: SessionAdmission[]): Promise<IssuedSession[]> {
    // A lone session takes its buckets by upserts of its own (`bucketTakes`): through the function and the JSON rows,
    // even with a path of the function's own for one turn, Postgres spent 0.1 ms more CPU a session back to back on one
    // connection, and 0.25 ms at 2 ms apart.
    if (issues.length === 1) {
      const [{ threadId, agentId, historyLimit, options, budgets }] = issues as [SessionAdmission];
      return [await this.open(threadId, agentId, historyLimit, 'issue', options, budgets)];
    }
    const rows = await groupedTakeRows<SessionAdmission, SessionRowWith>(this.db, 'chat_issue_sessions', ISSUE_SESSIONS, issues, ADMISSION_FIELDS);
    return rows.map((row) => ({ buckets: row.buckets, opened: row.id == null ? undefined : openedSession(row, row.ticket_id) }));
  }

  /**
   * A customer's message to a session the server issued to it (`continue_issued`), in the statement that takes the
   * turn's minute budgets, and only when they allow it: stored at once (`storedMessage`) when the session is under
   * human takeover and nobody is in its line, as no turn follows; else the turn joins the line (`ticketId`) and opens
   * the session in stage 2 once first. No history is read. The commit waits for the WAL flush only for a stored
   * message. `opened` is `undefined` when the session is not one this caller may continue.
   */
  continueIssued(
    threadId: string,
    agentId: string,
    options: { line: NonNullable<OpenSessionOptions['line']>; customerMessage: { content: string; messageType: MessageType } },
    budgets: BucketTake[],
  ): Promise<{ buckets: (TakenBucket | null)[]; opened: OpenedSession | undefined }> {
    const { line, customerMessage } = options;
    return this.open(threadId, agentId, 0, 'continue_issued', { quotaCaller: null, line, customerMessage: { ...customerMessage, ticketId: null } }, budgets);
  }

  /**
   * A turn's ticket in the line of a session it continues (`choose` or `continue_issued`), taken in the statement that
   * takes its minute budgets once they allow the turn (`ticketId`, else `null`), and the session opened in the same
   * statement (`opened`, its `ticketId` `null`: the ticket is this one) when that ticket is first in line and no human
   * answers the session: the turn then needs no statement of its own to open it. That is decided by
   * `session_line_first` (migration `0038`), with a snapshot taken after the line's lock (`joinLine`): this
   * statement's own, taken before it waited for the lock, can miss a ticket ahead committed meanwhile. Otherwise
   * `opened` is `undefined`, and the turn opens the session in stage 2 as before, once first (`firstIn`), or is
   * refused there. Its commit does not wait for the WAL flush (`SKIP_FLUSH_WAIT`), as `TrafficLimitStore.take`'s.
   * Turns of the same mode that come while such a statement runs share the next ({@link ADMIT_SESSIONS}).
   */
  async admitToSession(
    threadId: string,
    agentId: string | null,
    historyLimit: number,
    mode: AdmissionMode,
    options: { quotaCaller: string | null; line: NonNullable<OpenSessionOptions['line']> },
    budgets: BucketTake[],
  ): Promise<AdmittedToSession> {
    return this.admissions[mode].submit({ threadId, agentId, historyLimit, options, budgets });
  }

  /** The statements admitting turns to sessions they continue, per mode, one for each list of budgets ({@link admitToSession}). */
  private readonly admissions: Record<AdmissionMode, BudgetGroupedCalls<SessionAdmission, AdmittedToSession>> = {
    choose: new BudgetGroupedCalls((batch: SessionAdmission[]) => this.admitSessions('choose', batch), bySession),
    continue_issued: new BudgetGroupedCalls((batch: SessionAdmission[]) => this.admitSessions('continue_issued', batch), bySession),
  };

  /**
   * Turns to `admissions`' sessions, all different, in `mode`, with the same budgets, in one statement: a row of
   * {@link ADMISSION_FIELDS} each ({@link ADMIT_SESSIONS}). Customers' turns over socket.io come this way, many at once,
   * and administrators' and scheduled runs that start together.
   */
  private async admitSessions(mode: AdmissionMode, admissions: SessionAdmission[]): Promise<AdmittedToSession[]> {
    // A lone turn keeps its own upserts, as a lone issued session does (`issueSessions`).
    if (admissions.length === 1) {
      const [{ threadId, agentId, historyLimit, options, budgets }] = admissions as [SessionAdmission];
      return [await this.open(threadId, agentId, historyLimit, mode, { ...options, admission: true }, budgets)];
    }
    const rows = await groupedTakeRows<SessionAdmission, SessionRowWith>(
      this.db,
      `chat_admit_sessions_${mode}`,
      ADMIT_SESSIONS[mode],
      admissions,
      ADMISSION_FIELDS,
    );
    return rows.map((row) => ({
      buckets: row.buckets,
      ticketId: row.ticket_id,
      opened: row.id == null ? undefined : { ...openedSession(row, null), storedMessage: null },
    }));
  }

  private async open(
    threadId: string,
    agentId: string | null,
    historyLimit: number,
    mode: SessionMode,
    options: OpenSessionOptions,
    budgets: BucketTake[] | null,
  ): Promise<AdmittedToSession> {
    const { quotaCaller, line, firstIn, customerMessage, admission } = options;
    const values: unknown[] = [threadId, agentId, Math.max(0, historyLimit), quotaCaller];
    const p = (value: unknown) => `$${values.push(value)}`;
    const takes = budgets && bucketTakes(budgets, p);
    // The same snapshot as the statement: a ticket ahead that left with its stored turn is gone, and that turn is in the history.
    const first = firstIn && `NOT EXISTS (SELECT 1 FROM session_turn_queue WHERE session_id = $1 AND id < ${p(firstIn)}::bigint AND expires_at > now())`;
    const lineValues = line && { turn: p(line.turnId), instance: p(line.instanceId), seconds: p(line.seconds) };
    // Admission: the ticket first, then the session if that ticket is first in line, checked with a fresh snapshot
    // against this one's view of the session row (migration `0038`).
    const admitted = admission && lineValues ? `q AS (${joinLine({ session: '$1::varchar', ...lineValues }, takes ? { where: takes.allowed() } : {})}), ` : '';
    // The session row's version in this statement's snapshot: `continue_issued` checks it on the row it reads.
    const seenXmin = mode === 'continue_issued' ? 'chat_sessions.xmin' : '(SELECT xmin FROM chat_sessions WHERE id = $1)';
    const lineFirst = admitted && `session_line_first($1, (SELECT id FROM q)::bigint, ${seenXmin})`;
    const gate = [takes?.allowed(), first, lineFirst].filter(Boolean).join(' AND ') || 'TRUE';
    const ticket =
      lineValues && !admitted
        ? `, q AS (${joinLine({ session: 's.id', ...lineValues }, { from: 's', where: customerMessage ? 'NOT EXISTS (SELECT 1 FROM cm)' : undefined })})`
        : '';
    // The same snapshot as the ticket it would take: one taken by a statement still running is not seen, and its turn
    // then finds this message stored, as if it had come first.
    const lineEmpty = line ? ' AND NOT EXISTS (SELECT 1 FROM session_turn_queue WHERE session_id = s.id AND expires_at > now())' : '';
    const stored = customerMessage
      ? `, cm AS (INSERT INTO chat_messages (id, session_id, role, content, message_type, created_at)
           SELECT ${p(randomUUID())}::uuid, s.id, 'user', ${p(customerMessage.content)}, ${p(customerMessage.messageType)}, now() FROM s WHERE s.status = 'HUMAN_ACTIVE'${lineEmpty}
           RETURNING ${MESSAGE_COLUMNS})${mode === 'continue_issued' ? ', cu AS (UPDATE chat_sessions SET updated_at = now() WHERE id = (SELECT session_id FROM cm))' : ''}${customerMessage.ticketId ? `, cq AS (${leaveLine(`(SELECT ${p(customerMessage.ticketId)}::bigint FROM cm)`)})` : ''}`
      : '';
    const [row] = await preparedQuery<SessionRowWith & { stored_message: MessageRow | null } & Record<string, unknown>>(
      this.db,
      `chat_open_session_${mode}${line ? '_line' : ''}${admitted ? '_admit' : ''}${firstIn ? '_first' : ''}${customerMessage ? '_customer' : ''}${customerMessage?.ticketId ? '_leave' : ''}${budgets ? `_buckets${budgets.length}` : ''}`,
      `WITH ${[...(takes?.ctes ?? []), ''].join(', ')}${admitted}s AS (${OPEN_SESSION[mode](gate, customerMessage != null)})
       ${stored}${ticket}
       SELECT ${[...(takes?.columns ?? []), customerMessage ? skipFlushWaitUnless('cm') : SKIP_FLUSH_WAIT, ''].join(', ')}s.*, ${line ? '(SELECT id FROM q)' : 'NULL'} AS ticket_id, ${customerMessage ? '(SELECT row_to_json(cm) FROM cm)' : 'NULL'} AS stored_message,
         ${openedColumns('$1', '$3', '$4::text')}
       FROM ${takes ? '(VALUES (1)) AS taken (one) LEFT JOIN s ON true' : 's'}`,
      values,
    );
    const buckets = takes ? takenBuckets(budgets.length, row!) : [];
    const ticketId = row?.ticket_id ?? null;
    // Refused by the mode, the line or a budget: no session row (with budgets, a row of nulls beside the buckets).
    if (!row || row.id == null) return { buckets, ticketId, opened: undefined };
    return { buckets, ticketId, opened: { ...openedSession(row, admitted ? null : row.ticket_id), storedMessage: row.stored_message } };
  }

  /** The session's status now (for example `HUMAN_ACTIVE` once an operator took over). */
  async status(sessionId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ status: string }>('SELECT status FROM chat_sessions WHERE id = $1', { bind: [sessionId], type: QueryTypes.SELECT });
    return row?.status;
  }

  /**
   * Stores a turn: user message, reply, turn row, context snapshot and the session's override, in one statement (so
   * one round trip, atomic without a transaction), which turns that end while another is stored share
   * (`GROUPED_STATEMENTS`). Returns the stored messages, oldest first.
   */
  persistTurn(turn: TurnRecord): Promise<MessageRow[]> {
    return this.saves.submit(turn);
  }

  private readonly saves = new GroupedCalls<TurnRecord, MessageRow[]>((turns) => this.persistTurns(turns), {
    ...GROUPED_STATEMENTS,
    key: (turn) => turn.session_id,
  });

  /** `turns`, of sessions all different, in one statement: a row of {@link TURN_FIELDS} each, in one JSON parameter. */
  private async persistTurns(turns: TurnRecord[]): Promise<MessageRow[][]> {
    const rows = turns.map((turn) => {
      const row: TurnRow = { turn, replyId: turn.reply !== null ? randomUUID() : null, cost: storedCost(turn) };
      return Object.fromEntries(TURN_FIELDS.map(([name, , value]) => [name, value(row)]));
    });
    const stored = await preparedQuery<MessageRow>(this.db, 'chat_persist_turns', PERSIST_TURNS, [bindableJson(rows)]);
    const byTurn = new Map<string, MessageRow[]>(turns.map((turn) => [turn.turn_id, []]));
    for (const message of stored) byTurn.get(message.turn_id!)!.push(message);
    return turns.map((turn) => byTurn.get(turn.turn_id)!);
  }
}

type TurnRow = { turn: TurnRecord; replyId: string | null; cost: ReturnType<typeof storedCost> };

/** The fields of a turn's row in {@link PERSIST_TURNS}: a column of `u` each, its type, and its value for the turn. */
const TURN_FIELDS: [string, string, (row: TurnRow) => unknown][] = [
  ['turn_id', 'uuid', ({ turn }) => turn.turn_id],
  ['session_id', 'varchar', ({ turn }) => turn.session_id],
  ['agent_id', 'uuid', ({ turn }) => turn.agent_id],
  ['message_type', 'varchar', ({ turn }) => turn.message_type],
  ['user_message_id', 'uuid', ({ turn }) => turn.user_message.id],
  ['user_text', 'text', ({ turn }) => turn.user_text],
  ['user_time', 'timestamptz', ({ turn }) => turn.user_message.created_at],
  ['reply_id', 'uuid', ({ replyId }) => replyId],
  ['reply', 'text', ({ turn }) => turn.reply],
  ['reply_metadata', 'jsonb', ({ turn }) => turn.reply_metadata],
  ['orchestrator_key', 'varchar', ({ turn }) => turn.orchestrator_key],
  ['response_source', 'varchar', ({ turn }) => turn.response_source],
  ['status', 'varchar', ({ turn }) => turn.status],
  ['error_message', 'text', ({ turn }) => turn.error_message],
  ['model_name', 'varchar', ({ turn }) => turn.model?.model_name ?? null],
  ['model_provider', 'varchar', ({ turn }) => turn.model?.model_provider ?? null],
  ['model_temperature', 'float8', ({ turn }) => turn.model?.model_temperature ?? null],
  ['input_tokens', 'int', ({ turn }) => turn.usage.input_tokens],
  ['output_tokens', 'int', ({ turn }) => turn.usage.output_tokens],
  ['total_tokens', 'int', ({ turn }) => turn.usage.total_tokens],
  ['token_usage_source', 'varchar', ({ turn }) => turn.usage.token_usage_source],
  ['cost_total', 'numeric', ({ cost }) => cost.total],
  ['cost_input', 'numeric', ({ cost }) => cost.input],
  ['cost_output', 'numeric', ({ cost }) => cost.output],
  ['pricing_missing', 'bool', ({ turn }) => turn.cost.missing_pricing_count > 0],
  ['counts_toward_limits', 'bool', ({ turn }) => turn.counts_toward_limits],
  ['caller_key', 'varchar', ({ turn }) => turn.caller_key],
  ['trace_id', 'varchar', ({ turn }) => turn.trace_id],
  ['first_token_ms', 'int', ({ turn }) => turn.first_token_ms],
  ['latency_ms', 'int', ({ turn }) => turn.latency_ms],
  ['context', 'jsonb', ({ turn }) => turn.context],
  ['override_model_name', 'varchar', ({ turn }) => turn.override?.model_name ?? null],
  ['override_model_provider', 'varchar', ({ turn }) => turn.override?.model_provider ?? null],
  ['override_model_temperature', 'float8', ({ turn }) => turn.override?.model_temperature ?? null],
  ['time_zone', 'varchar', ({ turn }) => turn.time_zone],
  ['ticket_id', 'bigint', ({ turn }) => turn.ticket_id],
];

/**
 * Stores turns of different sessions (`TURN_FIELDS`, a row of `u` each). A reply is stored after its user message even
 * when the clock stepped back. Messages come back in the order they were written.
 *
 * Postgres cannot tell how many rows `u` has, one or many, so it plans the statement once per connection, not per call
 * (given arrays, whose lengths it sees, it planned every call anew, which doubled the statement's cost). Its sessions
 * and tickets are written by `session_turns_stored` (migration `0039`), which finds each by its key: planned here, with
 * a hundred rows guessed for `u` and the tables' sizes when the connection first stored turns, they were scanned whole.
 * `e` is read with `m`, which always has rows (a turn's user message), so it runs once. A snapshot has no foreign key to
 * its turn (migration `0040`): both come from the same row of `u` here, its only writer.
 */
const PERSIST_TURNS = `WITH u AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS u (${TURN_FIELDS.map(([name, type]) => `${name} ${type}`).join(', ')})),
  m AS (
    INSERT INTO chat_messages (id, session_id, turn_id, role, content, message_type, metadata, created_at)
    SELECT user_message_id, session_id, turn_id, 'user', user_text, message_type, NULL::jsonb, user_time FROM u
    UNION ALL
    SELECT reply_id, session_id, turn_id, 'assistant', reply, message_type, reply_metadata, GREATEST(now(), user_time + interval '1 microsecond') FROM u
    WHERE reply_id IS NOT NULL
    RETURNING ${MESSAGE_COLUMNS}),
  t AS (
    INSERT INTO conversation_turns (id, session_id, agent_id, user_message_id, assistant_message_id, message_type, orchestrator_key,
      response_source, status, error_message, model_name, model_provider, model_temperature, input_tokens, output_tokens, total_tokens,
      token_usage_source, estimated_cost_usd, estimated_input_cost_usd, estimated_output_cost_usd, pricing_missing, counts_toward_limits, caller_key, trace_id, first_token_ms, latency_ms, created_at)
    SELECT turn_id, session_id, agent_id, user_message_id, reply_id, message_type, orchestrator_key, response_source, status, error_message,
      model_name, model_provider, model_temperature, input_tokens, output_tokens, total_tokens, token_usage_source, cost_total, cost_input, cost_output,
      pricing_missing, counts_toward_limits, caller_key, trace_id, first_token_ms, latency_ms, now() FROM u),
  c AS (
    INSERT INTO turn_context_snapshots (turn_id, observability_schema_version, context, created_at)
    SELECT turn_id, '${OBSERVABILITY_SCHEMA_VERSION}', context, now() FROM u),
  e AS (SELECT session_turns_stored($1::jsonb))
  SELECT ${MESSAGE_COLUMNS} FROM m, e ORDER BY created_at`;

/** A turn admitted many to a statement: a session to issue, or to continue (`BudgetGroupedCalls`). */
interface SessionAdmission extends BudgetedItem {
  threadId: string;
  agentId: string | null;
  historyLimit: number;
  options: Pick<OpenSessionOptions, 'quotaCaller' | 'line'>;
}

/** A session is admitted once in a statement. */
const bySession = (admission: SessionAdmission) => admission.threadId;

type IssuedSession = { buckets: (TakenBucket | null)[]; opened: OpenedSession | undefined };

/** A turn's admission to a session it continues ({@link ConversationStore.admitToSession}). */
type AdmittedToSession = IssuedSession & { ticketId: string | null };

/** The fields of a session's row in {@link ISSUE_SESSIONS} and {@link ADMIT_SESSIONS}: a column of `u` each, its type, and its value. */
const ADMISSION_FIELDS: GroupedField<SessionAdmission>[] = [
  ['id', 'varchar', (admission) => admission.threadId],
  ['agent_id', 'uuid', (admission) => admission.agentId],
  ['history_limit', 'int', (admission) => Math.max(0, admission.historyLimit)],
  ['quota_caller', 'text', (admission) => admission.options.quotaCaller],
  ['line_turn', 'uuid', (admission) => admission.options.line?.turnId ?? null],
  ['line_instance', 'text', (admission) => admission.options.line?.instanceId ?? null],
  ['line_seconds', 'float8', (admission) => admission.options.line?.seconds ?? null],
];

/** A row's `u` (`ADMISSION_FIELDS`) and `t` in {@link ISSUE_SESSIONS} and {@link ADMIT_SESSIONS}. */
const GROUPED_TAKE = groupedTake(ADMISSION_FIELDS);

/**
 * Issues new sessions (`ADMISSION_FIELDS`, a row of `u` each, `i` its place from 1): the minute budgets of all of
 * them are taken by `take_turn_buckets` (migration `0042`) with `$2` turns of `$7` buckets each (keys `$3`, budgets
 * `$4`, the minute `$5` to `$6`), and each session whose turn they allow is opened, joining its line when `line_turn`
 * is set. A row per session, in the order given, with its buckets after the take (`points`, `expires`, null for one
 * not charged) and, when it opened, its row ({@link SessionRowWith}).
 */
const ISSUE_SESSIONS = `WITH ${GROUPED_TAKE},
  s AS (
    INSERT INTO chat_sessions (id, agent_id, status, issued_publicly, created_at, updated_at)
    SELECT u.id, u.agent_id, 'AI_ACTIVE', true, now(), now() FROM u, t WHERE t.allowed[u.i]
    RETURNING ${SESSION_COLUMNS}),
  q AS (${joinLine(
    { session: 's.id', turn: 'u.line_turn', instance: 'u.line_instance', seconds: 'u.line_seconds' },
    { from: 's JOIN u ON u.id = s.id', where: 'u.line_turn IS NOT NULL' },
  )})
  SELECT ${GROUP_TAKEN_BUCKETS}, ${SKIP_FLUSH_WAIT}, s.*, q.id AS ticket_id, ${openedColumns('u.id', 'u.history_limit', 'u.quota_caller')}
  FROM u CROSS JOIN t LEFT JOIN s ON s.id = u.id LEFT JOIN q ON q.session_id = s.id
  ORDER BY u.i`;

/**
 * Admits turns to sessions they continue (`ADMISSION_FIELDS`, a row of `u` each), as a lone admission does
 * (`ConversationStore.admitToSession`), their budgets taken as {@link ISSUE_SESSIONS} takes them: each turn they allow
 * joins its session's line (`q`), and its session is opened (`s`) as `OPEN_SESSION` opens it in the turn's mode, when
 * its ticket is first and no human answers it (`session_line_first`, migration `0038`, against the row's version in
 * this statement's snapshot). The lines' locks are taken in the order of their keys, each after every budget row, and
 * an administrator's session rows (`choose`, which may create them) in the order of their ids after every line's, as a
 * lone admission takes them: two such statements, or one and a lone admission, cannot each hold a lock the other
 * waits for. History and the caller's turns today are read for an opened session only. A row per turn, in the order
 * given.
 */
const ADMIT_SESSIONS: Record<AdmissionMode, string> = {
  continue_issued: admissionStatement(`SELECT c.* FROM u JOIN q ON q.session_id = u.id CROSS JOIN LATERAL (
      SELECT ${SESSION_COLUMNS} FROM chat_sessions
      WHERE id = u.id AND (agent_id = u.agent_id) IS TRUE AND issued_publicly AND session_line_first(u.id, q.id::bigint, chat_sessions.xmin)) AS c`),
  choose: admissionStatement(`INSERT INTO chat_sessions (id, agent_id, status, created_at, updated_at)
    SELECT a.id, a.agent_id, 'AI_ACTIVE', now(), now() FROM (SELECT u.id, u.agent_id, q.id AS ticket FROM u JOIN q ON q.session_id = u.id ORDER BY u.id) AS a
    WHERE session_line_first(a.id, a.ticket::bigint, (SELECT seen.xmin FROM chat_sessions AS seen WHERE seen.id = a.id))
    ON CONFLICT (id) DO UPDATE SET agent_id = COALESCE(chat_sessions.agent_id, EXCLUDED.agent_id)
    WHERE chat_sessions.agent_id IS NULL OR chat_sessions.agent_id = EXCLUDED.agent_id
    RETURNING ${SESSION_COLUMNS}`),
};

/** {@link ADMIT_SESSIONS} with `open`, the CTE opening the sessions of `q`'s tickets. */
function admissionStatement(open: string): string {
  return `WITH ${GROUPED_TAKE},
  q AS (${joinLine(
    { session: 'u.id', turn: 'u.line_turn', instance: 'u.line_instance', seconds: 'u.line_seconds' },
    { from: '(SELECT u.* FROM u, t WHERE t.allowed[u.i] ORDER BY hashtext(u.id), u.id) AS u' },
  )}),
  s AS (${open})
  SELECT ${GROUP_TAKEN_BUCKETS}, ${SKIP_FLUSH_WAIT}, s.*, q.id AS ticket_id,
    ${openedColumns('s.id', 'u.history_limit', '(CASE WHEN s.id IS NOT NULL THEN u.quota_caller END)')}
  FROM u CROSS JOIN t LEFT JOIN q ON q.session_id = u.id LEFT JOIN s ON s.id = u.id
  ORDER BY u.i`;
}

/** The stored cost columns: the estimate, 0 for a turn without a model call, else unknown (`null`). */
function storedCost(turn: TurnRecord): { total: number | null; input: number | null; output: number | null } {
  if (turn.cost.estimated_interaction_count > 0) return { total: turn.cost.total_cost_usd, input: turn.cost.input_cost_usd, output: turn.cost.output_cost_usd };
  return turn.usage.token_usage_source === 'no_model_invocation' ? { total: 0, input: 0, output: 0 } : { total: null, input: null, output: null };
}
