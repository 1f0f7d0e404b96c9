import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../../db/sql-store.js';
import { MESSAGE_COLUMNS, type MessageRow } from '../../chat/messages.js';
import type { ApprovalRow, ApprovalStatus } from './approval-view.js';

/** The SQL of the approval checkpoint: `tool_approval_requests`, and the session message an approved call posts. */
export class ApprovalStore extends SqlStore {
  async insert(
    input: Pick<ApprovalRow, 'session_id' | 'turn_id' | 'agent_id' | 'mount_id' | 'mcp_server_id' | 'tool_name' | 'arguments' | 'origin'>,
  ): Promise<ApprovalRow> {
    const [row] = await this.db.query<ApprovalRow>(
      `INSERT INTO tool_approval_requests (id, session_id, turn_id, agent_id, mount_id, mcp_server_id, tool_name, arguments, origin, status, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', now()) RETURNING *`,
      {
        bind: [
          randomUUID(),
          input.session_id,
          input.turn_id,
          input.agent_id,
          input.mount_id,
          input.mcp_server_id,
          input.tool_name,
          JSON.stringify(input.arguments),
          input.origin,
        ],
        type: QueryTypes.SELECT,
      },
    );
    return row!;
  }

  ofSession(sessionId: string): Promise<ApprovalRow[]> {
    return this.db.query<ApprovalRow>('SELECT * FROM tool_approval_requests WHERE session_id = $1 ORDER BY created_at DESC, id', {
      bind: [sessionId],
      type: QueryTypes.SELECT,
    });
  }

  /** The request, locked for the transaction. */
  async lock(id: string, transaction: Transaction): Promise<ApprovalRow | undefined> {
    const [row] = await this.db.query<ApprovalRow>('SELECT * FROM tool_approval_requests WHERE id = try_uuid($1) FOR UPDATE', {
      bind: [id],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  async decide(id: string, status: ApprovalStatus, decidedBy: string | null, transaction: Transaction): Promise<ApprovalRow> {
    const [row] = await this.db.query<ApprovalRow>(
      'UPDATE tool_approval_requests SET status = $2, decided_by = $3, decided_at = now() WHERE id = $1 RETURNING *',
      {
        bind: [id, status, decidedBy],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return row!;
  }

  /** The mount's deadline and its server's name, or `undefined` once the mount is gone. */
  async mount(mountId: string | null): Promise<{ timeout_ms: number; server_name: string } | undefined> {
    const [row] = await this.db.query<{ timeout_ms: number; server_name: string }>(
      'SELECT m.timeout_ms, s.name AS server_name FROM agent_mcp_mounts m JOIN mcp_servers s ON s.id = m.mcp_server_id WHERE m.id = $1',
      { bind: [mountId], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** The call's result as an assistant message of the session. */
  async insertResultMessage(sessionId: string, content: string, metadata: Record<string, unknown>): Promise<MessageRow> {
    const [row] = await this.db.query<MessageRow>(
      `INSERT INTO chat_messages (id, session_id, role, content, metadata, created_at) VALUES ($1, $2, 'assistant', $3, $4, now()) RETURNING ${MESSAGE_COLUMNS}`,
      { bind: [randomUUID(), sessionId, content, JSON.stringify(metadata)], type: QueryTypes.SELECT },
    );
    return row!;
  }

  async recordResult(id: string, result: { status: ApprovalStatus; payload: unknown; error: string | null; messageId: string }): Promise<ApprovalRow> {
    const [row] = await this.db.query<ApprovalRow>(
      'UPDATE tool_approval_requests SET status = $2, result = $3, error_message = $4, result_message_id = $5 WHERE id = $1 RETURNING *',
      { bind: [id, result.status, JSON.stringify(result.payload ?? null), result.error, result.messageId], type: QueryTypes.SELECT },
    );
    return row!;
  }
}
