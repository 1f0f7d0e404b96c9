import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { MESSAGE_COLUMNS, presentMessage, type MessageRow } from '../../chat/messages.js';
import type { SessionEvents } from '../../chat/session-events.js';
import { presentApproval, type ApprovalRow, type ApprovalStatus, type ToolApprovalView } from './approval-view.js';
import type { McpCallAudits } from './call-audit-store.js';
import { redactSecrets } from './masking.js';
import { businessPayload, failurePayload, jsonOutput } from './payloads.js';
import type { McpServers } from '../admin/servers.js';

/** The text a turn answers when its tool call waits for an operator. */
export const pendingApprovalReply = (toolName: string) => `The ${toolName} request needs an operator's approval; its result will be posted here once approved.`;

/**
 * The approval checkpoint of the tool pipeline (spec 4.13): a call through a mount with `approval = "operator"` is
 * held as a request instead of made. Operators see requests over REST and as `tool_approval` events of the session's
 * room; an approval (audited) makes the call and posts its result to the session as an assistant message, a
 * rejection records the decision and calls nothing.
 */
export class ToolApprovals {
  constructor(
    private readonly db: Sequelize,
    private readonly servers: McpServers,
    private readonly audits: McpCallAudits,
    private readonly events: SessionEvents,
  ) {}

  async request(
    input: Pick<ApprovalRow, 'session_id' | 'turn_id' | 'agent_id' | 'mount_id' | 'mcp_server_id' | 'tool_name' | 'arguments' | 'origin'>,
  ): Promise<ToolApprovalView> {
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
    const view = presentApproval(row!);
    this.events.publish({ type: 'tool_approval', session_id: view.session_id, approval: view });
    return view;
  }

  async listBySession(sessionId: string) {
    const rows = await this.db.query<ApprovalRow>('SELECT * FROM tool_approval_requests WHERE session_id = $1 ORDER BY created_at DESC, id', {
      bind: [sessionId],
      type: QueryTypes.SELECT,
    });
    return { items: rows.map(presentApproval) };
  }

  /** An operator's decision on a pending request; an approval runs the call and posts its result to the session. */
  async decide(id: string, decision: 'approve' | 'reject', op: Operation): Promise<ToolApprovalView> {
    const row = await this.db.transaction(async (transaction) => {
      const [pending] = await this.db.query<ApprovalRow>('SELECT * FROM tool_approval_requests WHERE id = try_uuid($1) FOR UPDATE', {
        bind: [id],
        type: QueryTypes.SELECT,
        transaction,
      });
      if (!pending) throw new NotFoundError(`tool approval ${id} not found`, { code: 'TOOL_APPROVAL_NOT_FOUND' });
      if (pending.status !== 'pending') throw new ConflictError(`tool approval ${id} is already ${pending.status}`, { code: 'TOOL_APPROVAL_DECIDED' });
      const status: ApprovalStatus = decision === 'approve' ? 'approved' : 'rejected';
      const [updated] = await this.db.query<ApprovalRow>(
        'UPDATE tool_approval_requests SET status = $2, decided_by = $3, decided_at = now() WHERE id = $1 RETURNING *',
        {
          bind: [pending.id, status, op.operator.admin_user_id],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      await auditOperation(
        this.db,
        'core.mcp',
        op,
        {
          action: `mcp.tool_approval.${decision}`,
          target_type: 'tool_approval',
          target_id: pending.id,
          payload: { session_id: pending.session_id, tool_name: pending.tool_name },
        },
        transaction,
      );
      return updated!;
    });
    if (decision === 'reject') {
      const view = presentApproval(row);
      this.events.publish({ type: 'tool_approval', session_id: view.session_id, approval: view });
      return view;
    }
    return this.run(row);
  }

  /** Makes the approved call, audits it, and posts its result (or its failure) to the session. */
  private async run(row: ApprovalRow): Promise<ToolApprovalView> {
    const [mount] = await this.db.query<{ timeout_ms: number; server_name: string }>(
      'SELECT m.timeout_ms, s.name AS server_name FROM agent_mcp_mounts m JOIN mcp_servers s ON s.id = m.mcp_server_id WHERE m.id = $1',
      { bind: [row.mount_id], type: QueryTypes.SELECT },
    );
    const started = Date.now();
    let status: 'success' | 'error' | 'timeout' = 'error';
    let payload: unknown;
    let error: string | null;
    let secretValues: readonly string[] = [];
    try {
      if (!mount) throw new Error('the mount was removed after the request');
      const server = await this.servers.resolve(row.mcp_server_id);
      secretValues = server.secretValues;
      const outcome = await server.backend.callTool(server.connection, row.tool_name, row.arguments, { timeoutMs: mount.timeout_ms });
      status = outcome.status;
      error = outcome.error ?? null;
      payload = redactSecrets(
        outcome.status === 'success' ? outcome.result : failurePayload(mount.server_name, row.tool_name, outcome.error ?? outcome.status),
        secretValues,
      );
    } catch (failure) {
      error = (failure as Error).message;
      payload = failurePayload(mount?.server_name ?? '', row.tool_name, error);
    }
    await this.audits.record(
      {
        session_id: row.session_id,
        turn_id: row.turn_id,
        agent_id: row.agent_id,
        mount_id: row.mount_id,
        mcp_server_id: row.mcp_server_id,
        server_name: mount?.server_name ?? null,
        tool_name: row.tool_name,
        status,
        stage: 'mcp-call',
        origin: 'approval',
        reason: `approved request ${row.id}`,
        trace_id: null,
        round: null,
        request_payload: row.arguments,
        response_payload: payload,
        error_message: error,
        latency_ms: Date.now() - started,
      },
      secretValues,
    );
    const content = jsonOutput(status === 'success' ? businessPayload(payload, row.tool_name) : payload, false);
    const [message] = await this.db.query<MessageRow>(
      `INSERT INTO chat_messages (id, session_id, role, content, metadata, created_at) VALUES ($1, $2, 'assistant', $3, $4, now()) RETURNING ${MESSAGE_COLUMNS}`,
      {
        bind: [randomUUID(), row.session_id, content, JSON.stringify({ tool_approval_id: row.id, tool_name: row.tool_name, status })],
        type: QueryTypes.SELECT,
      },
    );
    const [updated] = await this.db.query<ApprovalRow>(
      'UPDATE tool_approval_requests SET status = $2, result = $3, error_message = $4, result_message_id = $5 WHERE id = $1 RETURNING *',
      {
        bind: [row.id, status === 'success' ? 'approved' : 'failed', JSON.stringify(payload ?? null), error, message!.id],
        type: QueryTypes.SELECT,
      },
    );
    const view = presentApproval(updated!);
    this.events.publish(
      { type: 'message', session_id: row.session_id, message: presentMessage(message!) },
      { type: 'tool_approval', session_id: row.session_id, approval: view },
    );
    return view;
  }
}
