import { ConflictError, NotFoundError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../../admin/operation.js';
import { presentMessage } from '../../chat/messages.js';
import type { SessionEvents } from '../../chat/session-events.js';
import { presentApproval, type ApprovalRow, type ApprovalStatus, type ToolApprovalView } from './approval-view.js';
import type { McpCallAudits } from './call-audit-store.js';
import { redactSecrets } from './masking.js';
import { businessPayload, failurePayload, jsonOutput } from './payloads.js';
import type { McpServers } from '../admin/servers.js';
import { ApprovalStore } from './approval-store.js';

/** The text a turn answers when its tool call waits for an operator. */
export const pendingApprovalReply = (toolName: string) => `The ${toolName} request needs an operator's approval; its result will be posted here once approved.`;

/**
 * The approval checkpoint of the tool pipeline (spec 4.13): a call through a mount with `approval = "operator"` is
 * held as a request instead of made. Operators see requests over REST and as `tool_approval` events of the session's
 * room; an approval (audited) makes the call and posts its result to the session as an assistant message, a
 * rejection records the decision and calls nothing.
 */
export class ToolApprovals {
  private readonly store: ApprovalStore;

  constructor(
    /** For the audit rows each decision commits with. */
    private readonly db: Sequelize,
    private readonly servers: McpServers,
    private readonly audits: McpCallAudits,
    private readonly events: SessionEvents,
  ) {
    this.store = new ApprovalStore(db);
  }

  async request(
    input: Pick<ApprovalRow, 'session_id' | 'turn_id' | 'agent_id' | 'mount_id' | 'mcp_server_id' | 'tool_name' | 'arguments' | 'origin'>,
  ): Promise<ToolApprovalView> {
    const view = presentApproval(await this.store.insert(input));
    this.events.publish({ type: 'tool_approval', session_id: view.session_id, approval: view });
    return view;
  }

  async listBySession(sessionId: string) {
    return { items: (await this.store.ofSession(sessionId)).map(presentApproval) };
  }

  /** An operator's decision on a pending request; an approval runs the call and posts its result to the session. */
  async decide(id: string, decision: 'approve' | 'reject', op: Operation): Promise<ToolApprovalView> {
    const row = await this.store.transaction(async (transaction) => {
      const pending = await this.store.lock(id, transaction);
      if (!pending) throw new NotFoundError(`tool approval ${id} not found`, { code: 'TOOL_APPROVAL_NOT_FOUND' });
      if (pending.status !== 'pending') throw new ConflictError(`tool approval ${id} is already ${pending.status}`, { code: 'TOOL_APPROVAL_DECIDED' });
      const status: ApprovalStatus = decision === 'approve' ? 'approved' : 'rejected';
      const updated = await this.store.decide(pending.id, status, op.operator.admin_user_id, transaction);
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
      return updated;
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
    const mount = await this.store.mount(row.mount_id);
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
    const message = await this.store.insertResultMessage(row.session_id, content, { tool_approval_id: row.id, tool_name: row.tool_name, status });
    const updated = await this.store.recordResult(row.id, { status: status === 'success' ? 'approved' : 'failed', payload, error, messageId: message.id });
    const view = presentApproval(updated);
    this.events.publish(
      { type: 'message', session_id: row.session_id, message: presentMessage(message) },
      { type: 'tool_approval', session_id: row.session_id, approval: view },
    );
    return view;
  }
}
