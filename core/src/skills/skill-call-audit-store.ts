import { NotFoundError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';

/** Audit statuses of a skill call (spec 2.8). */
export const SKILL_CALL_STATUSES = ['success', 'timeout', 'error', 'blocked'] as const;
export type SkillCallStatus = (typeof SKILL_CALL_STATUSES)[number];

/** One skill call as audited; payloads are masked before they get here. */
export interface SkillCallRecord {
  id: string;
  session_id: string | null;
  turn_id: string | null;
  agent_id: string | null;
  mount_id: string | null;
  skill_id: string | null;
  skill_version_id: string | null;
  skill_name: string;
  version_number: number | null;
  backend_type: string | null;
  backend_ref_id: string | null;
  tool_name: string | null;
  status: SkillCallStatus;
  trace_id: string | null;
  request_payload: unknown;
  response_payload: unknown;
  error_message: string | null;
  latency_ms: number | null;
  created_at: Date;
}

const COLUMNS = [
  'id',
  'session_id',
  'turn_id',
  'agent_id',
  'mount_id',
  'skill_id',
  'skill_version_id',
  'skill_name',
  'version_number',
  'backend_type',
  'backend_ref_id',
  'tool_name',
  'status',
  'trace_id',
  'request_payload',
  'response_payload',
  'error_message',
  'latency_ms',
  'created_at',
] as const;

/** The skill-call audit (spec 2.8, 4.4, 4.12): written as each call ends, read per agent or per session, newest first. */
export class SkillCallAudits {
  constructor(private readonly db: Sequelize) {}

  async insert(record: SkillCallRecord): Promise<void> {
    const values = COLUMNS.map((column) =>
      column === 'request_payload' || column === 'response_payload' ? JSON.stringify(record[column] ?? null) : record[column],
    );
    await this.db.query(`INSERT INTO skill_call_audits (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map((_, i) => `$${i + 1}`).join(', ')})`, { bind: values });
  }

  async listForAgent(agentId: string, options: ListOptions) {
    await this.require('SELECT 1 FROM agents WHERE id = try_uuid($1)', agentId, new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' }));
    return this.list('agent_id', agentId, options);
  }

  async listForSession(sessionId: string, options: ListOptions) {
    await this.require(
      'SELECT 1 FROM chat_sessions WHERE id = $1',
      sessionId,
      new NotFoundError(`session ${sessionId} not found`, { code: 'SESSION_NOT_FOUND' }),
    );
    return this.list('session_id', sessionId, options);
  }

  /** `value` names a row found above, so it compares with the column's own type (and its index). */
  private async list(column: 'agent_id' | 'session_id', value: string, options: ListOptions) {
    return newestFirst(
      this.db,
      { from: 'skill_call_audits', where: `r.${column} = $1 AND ($2::text IS NULL OR r.status = $2)`, bind: [value, options.status ?? null] },
      options,
      presentSkillCall,
    );
  }

  private async require(sql: string, id: string, missing: NotFoundError): Promise<void> {
    const [row] = await this.db.query(sql, { bind: [id], type: QueryTypes.SELECT });
    if (!row) throw missing;
  }
}

export interface ListOptions {
  status?: SkillCallStatus;
  limit: number;
  cursor?: string;
}

export function presentSkillCall(record: SkillCallRecord) {
  const { id, created_at, ...rest } = record;
  return { skill_call_id: id, ...rest, created_at: created_at.toISOString() };
}
