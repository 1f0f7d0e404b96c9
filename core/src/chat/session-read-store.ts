import { NotFoundError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { decodeCursor, encodeCursor } from '../db/keyset-cursor.js';
import { presentCorrectionSummary, TURN_CORRECTION_JSON, type CorrectionRow } from '../knowledge/correction-views.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';
import { MESSAGE_COLUMNS, presentMessage, presentSessionState, type MessageRow, type SessionStateRow } from './messages.js';

const preview = (text: string | null, length = 200) => (text === null ? null : text.length > length ? `${text.slice(0, length)}…` : text);

interface SessionListRow extends SessionStateRow {
  agent_name: string | null;
  created_at: Date;
  updated_at: Date;
  handoff_requested_at: Date | null;
}

interface TurnRow {
  id: string;
  agent_id: string | null;
  message_type: string;
  orchestrator_key: string | null;
  response_source: string;
  status: string;
  error_message: string | null;
  model_name: string | null;
  model_provider: string | null;
  model_temperature: number | null;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  token_usage_source: TokenUsageSummary['token_usage_source'];
  estimated_cost_usd: string | null;
  trace_id: string;
  first_token_ms: number | null;
  latency_ms: number;
  created_at: Date;
  user_text: string;
  reply_text: string | null;
  correction: CorrectionRow | null;
}

/** Read side of conversations: the session list, messages, turns and turn contexts (spec 2.2, 4.4). */
export class SessionQueries {
  constructor(private readonly db: Sequelize) {}

  /**
   * Sessions, most recently active first. A session without a bound agent
   * reports the agent of its latest turn that had one (`effective_agent_id`,
   * a generated column); `agent_id` filters on that same effective agent.
   * `q` matches the thread id or message text as a substring, `%` and `_`
   * literally, through trigram indexes. `handoff_requested_at` is the time of
   * the latest reply in which a grounded agent asked for a person, while the
   * session is the AI's and no operator has taken it over since.
   */
  async listSessions(filters: { agent_id?: string; q?: string; date_from?: Date; date_to?: Date; limit: number; cursor?: string }) {
    const [cursorAt, cursorId] = decodeCursor(filters.cursor);
    const rows = await this.db.query<SessionListRow>(
      `SELECT s.id, s.effective_agent_id AS agent_id, a.name AS agent_name, a.human_takeover_enabled, s.status, s.takeover_owner_id, s.takeover_owner_name,
              s.takeover_started_at, s.takeover_released_at, s.created_at, s.updated_at, h.at AS handoff_requested_at
       FROM chat_sessions s LEFT JOIN agents a ON a.id = s.effective_agent_id
       LEFT JOIN LATERAL (
         SELECT max(m.created_at) AS at FROM chat_messages m
         WHERE m.session_id = s.id AND m.role = 'assistant' AND m.metadata->>'grounding_path' = 'low_confidence_handoff'
       ) h ON s.status = 'AI_ACTIVE' AND h.at > COALESCE(s.takeover_started_at, '-infinity')
       WHERE ($1::uuid IS NULL OR s.effective_agent_id = $1::uuid)
         AND ($2::text IS NULL OR s.id ILIKE $2 OR s.id IN (SELECT m.session_id FROM chat_messages m WHERE m.content ILIKE $2))
         AND ($3::timestamptz IS NULL OR s.updated_at >= $3) AND ($4::timestamptz IS NULL OR s.updated_at < $4)
         AND ($5::timestamptz IS NULL OR (s.updated_at, s.id) < ($5::timestamptz, $6::text))
       ORDER BY s.updated_at DESC, s.id DESC LIMIT $7`,
      {
        bind: [
          filters.agent_id ?? null,
          filters.q === undefined ? null : `%${filters.q.replace(/[\\%_]/g, '\\$&')}%`,
          filters.date_from ?? null,
          filters.date_to ?? null,
          cursorAt,
          cursorId,
          filters.limit + 1,
        ],
        type: QueryTypes.SELECT,
      },
    );
    const page = rows.slice(0, filters.limit);
    return {
      items: page.map((r) => ({
        ...presentSessionState(r),
        agent_name: r.agent_name,
        created_at: r.created_at.toISOString(),
        handoff_requested_at: r.handoff_requested_at?.toISOString() ?? null,
      })),
      next_cursor: rows.length > filters.limit ? encodeCursor(page.at(-1)!.updated_at, page.at(-1)!.id) : null,
      limit: filters.limit,
    };
  }

  /** Messages oldest first, paged forward. */
  async listMessages(sessionId: string, options: { limit: number; cursor?: string }) {
    await this.requireSession(sessionId);
    const [cursorAt, cursorId] = decodeCursor(options.cursor);
    const rows = await this.db.query<MessageRow & { created_at: Date }>(
      `SELECT ${MESSAGE_COLUMNS} FROM chat_messages
       WHERE session_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id::text) > ($2::timestamptz, $3::text))
       ORDER BY created_at, id LIMIT $4`,
      { bind: [sessionId, cursorAt, cursorId, options.limit + 1], type: QueryTypes.SELECT },
    );
    const page = rows.slice(0, options.limit);
    return {
      items: page.map(presentMessage),
      next_cursor: rows.length > options.limit ? encodeCursor(page.at(-1)!.created_at, page.at(-1)!.id) : null,
      limit: options.limit,
    };
  }

  /**
   * The turn timeline, newest first, each with its model, `generation_usage`
   * and correction summary (its publication fields only with `revealPublication`).
   */
  async listTurns(sessionId: string, options: { limit: number; cursor?: string }, revealPublication: boolean) {
    await this.requireSession(sessionId);
    const [cursorAt, cursorId] = decodeCursor(options.cursor);
    const rows = await this.db.query<TurnRow>(
      `${TURN_SELECT} WHERE t.session_id = $1 AND ($2::timestamptz IS NULL OR (t.created_at, t.id::text) < ($2::timestamptz, $3::text))
       ORDER BY t.created_at DESC, t.id DESC LIMIT $4`,
      { bind: [sessionId, cursorAt, cursorId, options.limit + 1], type: QueryTypes.SELECT },
    );
    const page = rows.slice(0, options.limit);
    return {
      items: page.map((t) => presentTurn(t, revealPublication)),
      next_cursor: rows.length > options.limit ? encodeCursor(page.at(-1)!.created_at, page.at(-1)!.id) : null,
      limit: options.limit,
    };
  }

  /** The turn context snapshot (spec 2.2) with the turn it belongs to. */
  async turnContext(sessionId: string, turnId: string, revealPublication: boolean) {
    const [turn] = await this.db.query<TurnRow>(`${TURN_SELECT} WHERE t.session_id = $1 AND t.id = try_uuid($2)`, {
      bind: [sessionId, turnId],
      type: QueryTypes.SELECT,
    });
    if (!turn) throw new NotFoundError(`turn ${turnId} not found in session ${sessionId}`, { code: 'TURN_NOT_FOUND' });
    const [snapshot] = await this.db.query<{ context: Record<string, unknown> }>('SELECT context FROM turn_context_snapshots WHERE turn_id = $1', {
      bind: [turn.id],
      type: QueryTypes.SELECT,
    });
    const context = snapshot?.context ?? {};
    return { ...context, turn: { ...(context.turn as Record<string, unknown> | undefined), ...presentTurn(turn, revealPublication) } };
  }

  private async requireSession(sessionId: string): Promise<void> {
    const [row] = await this.db.query('SELECT 1 FROM chat_sessions WHERE id = $1', { bind: [sessionId], type: QueryTypes.SELECT });
    if (!row) throw new NotFoundError(`session ${sessionId} not found`, { code: 'SESSION_NOT_FOUND' });
  }
}

const TURN_SELECT = `SELECT t.*, um.content AS user_text, am.content AS reply_text, ${TURN_CORRECTION_JSON} FROM conversation_turns t
  JOIN chat_messages um ON um.id = t.user_message_id LEFT JOIN chat_messages am ON am.id = t.assistant_message_id`;

function presentTurn(t: TurnRow, revealPublication: boolean) {
  return {
    turn_id: t.id,
    agent_id: t.agent_id,
    message_type: t.message_type,
    status: t.status,
    error_message: t.error_message,
    response_source: t.response_source,
    orchestrator_key: t.orchestrator_key,
    user_message_preview: preview(t.user_text),
    assistant_reply_preview: preview(t.reply_text),
    trace_id: t.trace_id,
    model_name: t.model_name,
    model_provider: t.model_provider,
    model_temperature: t.model_temperature,
    generation_usage: { input_tokens: t.input_tokens, output_tokens: t.output_tokens, total_tokens: t.total_tokens, token_usage_source: t.token_usage_source },
    estimated_cost_usd: t.estimated_cost_usd === null ? null : Number(t.estimated_cost_usd),
    first_token_ms: t.first_token_ms,
    latency_ms: t.latency_ms,
    correction: presentCorrectionSummary(t.correction, revealPublication),
    created_at: t.created_at.toISOString(),
  };
}
