import { randomUUID } from 'node:crypto';
import type { ChatMessage, MessageType } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { ModelOverride } from './model-router.js';

export interface SessionRow {
  id: string;
  agent_id: string | null;
  status: string;
  model_name: string | null;
  model_provider: string | null;
  model_temperature: number | null;
}

/** Everything one turn writes: both messages, the turn row and its context snapshot. */
export interface TurnRecord {
  turn_id: string;
  session_id: string;
  agent_id: string | null;
  message_type: MessageType;
  user_text: string;
  reply: string | null;
  orchestrator_key: string | null;
  response_source: string;
  status: 'completed' | 'failed' | 'aborted';
  error_message: string | null;
  model: { model_name: string; model_provider: string; model_temperature: number | null } | null;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; token_usage_source: string };
  estimated_cost_usd: number | null;
  counts_toward_limits: boolean;
  caller_key: string | null;
  trace_id: string;
  first_token_ms: number | null;
  latency_ms: number;
  context: Record<string, unknown>;
}

export const OBSERVABILITY_SCHEMA_VERSION = 'v2';

/** Sessions, messages, turns and context snapshots in Postgres. */
export class Conversations {
  constructor(private readonly db: Sequelize) {}

  /** The session of `threadId`, created when unknown; a session keeps the first agent it was bound to. */
  async ensureSession(threadId: string, agentId: string | null): Promise<SessionRow> {
    const [row] = await this.db.query<SessionRow>(
      `INSERT INTO chat_sessions (id, agent_id, status, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', now(), now())
       ON CONFLICT (id) DO UPDATE SET agent_id = COALESCE(chat_sessions.agent_id, EXCLUDED.agent_id), updated_at = now()
       RETURNING id, agent_id, status, model_name, model_provider, model_temperature`,
      { bind: [threadId, agentId], type: QueryTypes.SELECT },
    );
    return row!;
  }

  /** The latest `limit` user and assistant messages, oldest first. */
  async history(sessionId: string, limit: number): Promise<ChatMessage[]> {
    if (limit <= 0) return [];
    const rows = await this.db.query<{ role: string; content: string }>(
      "SELECT role, content FROM chat_messages WHERE session_id = $1 AND role IN ('user', 'assistant') ORDER BY created_at DESC, id DESC LIMIT $2",
      { bind: [sessionId, limit], type: QueryTypes.SELECT },
    );
    return rows.reverse().map((r) => ({ role: r.role as 'user' | 'assistant', content: r.content }));
  }

  /** Stores a validated request override on the session (never on the fixed-response path). */
  async writeOverride(sessionId: string, override: ModelOverride): Promise<void> {
    await this.db.query(
      `UPDATE chat_sessions SET model_name = COALESCE($2, model_name), model_provider = COALESCE($3, model_provider),
              model_temperature = COALESCE($4, model_temperature), updated_at = now() WHERE id = $1`,
      { bind: [sessionId, override.model_name ?? null, override.model_provider ?? null, override.model_temperature ?? null] },
    );
  }

  /** One transaction per turn: user message, reply, turn and context snapshot. */
  async persistTurn(turn: TurnRecord): Promise<void> {
    const userMessageId = randomUUID();
    const replyId = turn.reply !== null ? randomUUID() : null;
    await this.db.transaction(async (transaction) => {
      await this.db.query(
        `INSERT INTO chat_messages (id, session_id, turn_id, role, content, message_type, created_at)
         VALUES ($1, $2, $3, 'user', $4, $5, now())${replyId ? ", ($6, $2, $3, 'assistant', $7, $5, now() + interval '1 microsecond')" : ''}`,
        { bind: [userMessageId, turn.session_id, turn.turn_id, turn.user_text, turn.message_type, ...(replyId ? [replyId, turn.reply] : [])], transaction },
      );
      await this.db.query(
        `INSERT INTO conversation_turns (id, session_id, agent_id, user_message_id, assistant_message_id, message_type, orchestrator_key,
           response_source, status, error_message, model_name, model_provider, model_temperature, input_tokens, output_tokens, total_tokens,
           token_usage_source, estimated_cost_usd, counts_toward_limits, caller_key, trace_id, first_token_ms, latency_ms, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, now())`,
        {
          bind: [
            turn.turn_id, turn.session_id, turn.agent_id, userMessageId, replyId, turn.message_type, turn.orchestrator_key,
            turn.response_source, turn.status, turn.error_message, turn.model?.model_name ?? null, turn.model?.model_provider ?? null,
            turn.model?.model_temperature ?? null, turn.usage.input_tokens, turn.usage.output_tokens, turn.usage.total_tokens,
            turn.usage.token_usage_source, turn.estimated_cost_usd, turn.counts_toward_limits, turn.caller_key, turn.trace_id,
            turn.first_token_ms, turn.latency_ms,
          ],
          transaction,
        },
      );
      await this.db.query(
        'INSERT INTO turn_context_snapshots (turn_id, observability_schema_version, context, created_at) VALUES ($1, $2, $3, now())',
        { bind: [turn.turn_id, OBSERVABILITY_SCHEMA_VERSION, JSON.stringify(turn.context)], transaction },
      );
      await this.db.query('UPDATE chat_sessions SET updated_at = now() WHERE id = $1', { bind: [turn.session_id], transaction });
    });
  }
}
