import { randomUUID } from 'node:crypto';
import { NotFoundError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { maskSensitive, redactText } from './masking.js';
import { newestFirst } from '../../db/keyset-cursor.js';

/** Audit statuses of spec 2.7 / 3.6. */
export type McpCallStatus = 'success' | 'timeout' | 'error' | 'blocked' | 'skipped';

/** One call, block or skip, as the pipeline reports it. */
export interface McpCallRecord {
  session_id: string | null;
  turn_id: string | null;
  agent_id: string | null;
  mount_id: string | null;
  mcp_server_id: string | null;
  server_name: string | null;
  tool_name: string;
  status: McpCallStatus;
  /** The pipeline stage that decided (`mcp-call`, `mcp-required-argument-check`, ...). */
  stage: string;
  /** What started it: `chat`, `quick_match`, `tool_handle` (a runtime's own call), `response_preview`. */
  origin: string;
  reason: string | null;
  trace_id: string | null;
  round: number | null;
  request_payload: unknown;
  response_payload: unknown;
  error_message: string | null;
  latency_ms: number | null;
}

interface AuditRow extends Omit<McpCallRecord, 'request_payload' | 'response_payload'> {
  id: string;
  request_payload: unknown;
  response_payload: unknown;
  created_at: Date;
}

/**
 * The MCP call audit (spec 2.7, 4.13). Payloads are masked before they are
 * stored: values under sensitive keys and every value of the server's
 * credential become `***`.
 */
export class McpCallAudits {
  constructor(private readonly db: Sequelize) {}

  async record(entry: McpCallRecord, secretValues: readonly string[] = []) {
    const id = randomUUID();
    const masked = {
      ...entry,
      request_payload: maskSensitive(entry.request_payload ?? null, secretValues),
      response_payload: maskSensitive(entry.response_payload ?? null, secretValues),
      reason: entry.reason === null ? null : redactText(entry.reason, secretValues),
      error_message: entry.error_message === null ? null : redactText(entry.error_message, secretValues),
    };
    const [row] = await this.db.query<AuditRow>(
      `INSERT INTO mcp_call_audits (id, session_id, turn_id, agent_id, mount_id, mcp_server_id, server_name, tool_name, status, stage, origin, reason, trace_id, round,
                                    request_payload, response_payload, error_message, latency_ms, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, clock_timestamp()) RETURNING *`,
      {
        bind: [
          id,
          masked.session_id,
          masked.turn_id,
          masked.agent_id,
          masked.mount_id,
          masked.mcp_server_id,
          masked.server_name,
          masked.tool_name,
          masked.status,
          masked.stage,
          masked.origin,
          masked.reason,
          masked.trace_id,
          masked.round,
          JSON.stringify(masked.request_payload),
          JSON.stringify(masked.response_payload),
          masked.error_message,
          masked.latency_ms,
        ],
        type: QueryTypes.SELECT,
      },
    );
    return presentCall(row!);
  }

  async listBySession(sessionId: string, page: { limit: number; cursor?: string }) {
    const [exists] = await this.db.query('SELECT 1 FROM chat_sessions WHERE id = $1', { bind: [sessionId], type: QueryTypes.SELECT });
    if (!exists) throw new NotFoundError(`session ${sessionId} not found`, { code: 'SESSION_NOT_FOUND' });
    return this.list('session_id', sessionId, page);
  }

  async listByAgent(agentId: string, page: { limit: number; cursor?: string }) {
    const [exists] = await this.db.query('SELECT 1 FROM agents WHERE id = try_uuid($1)', { bind: [agentId], type: QueryTypes.SELECT });
    if (!exists) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
    return this.list('agent_id', agentId, page);
  }

  /** `value` names a row found above, so it compares with the column's own type (and its index). */
  private list(column: 'session_id' | 'agent_id', value: string, page: { limit: number; cursor?: string }) {
    return newestFirst(this.db, { from: 'mcp_call_audits', where: `r.${column} = $1`, bind: [value] }, page, presentCall);
  }
}

export type McpCallView = ReturnType<typeof presentCall>;

function presentCall(row: AuditRow) {
  return {
    call_id: row.id,
    session_id: row.session_id,
    turn_id: row.turn_id,
    agent_id: row.agent_id,
    mount_id: row.mount_id,
    mcp_server_id: row.mcp_server_id,
    server_name: row.server_name,
    tool_name: row.tool_name,
    status: row.status,
    stage: row.stage,
    origin: row.origin,
    reason: row.reason,
    trace_id: row.trace_id,
    round: row.round,
    request_payload: row.request_payload,
    response_payload: row.response_payload,
    error_message: row.error_message,
    latency_ms: row.latency_ms,
    created_at: row.created_at.toISOString(),
  };
}
