// An operator's approval of a held tool call as it is stored and shown; its own module, so that session events can
// carry one without importing the approval workflow.
export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'failed';

export interface ApprovalRow {
  id: string;
  session_id: string;
  turn_id: string;
  agent_id: string;
  mount_id: string;
  mcp_server_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  origin: string;
  status: ApprovalStatus;
  decided_by: string | null;
  decided_at: Date | null;
  result: unknown;
  error_message: string | null;
  result_message_id: string | null;
  created_at: Date;
}

export type ToolApprovalView = ReturnType<typeof presentApproval>;

export function presentApproval(row: ApprovalRow) {
  return {
    approval_id: row.id,
    session_id: row.session_id,
    turn_id: row.turn_id,
    agent_id: row.agent_id,
    mount_id: row.mount_id,
    mcp_server_id: row.mcp_server_id,
    tool_name: row.tool_name,
    arguments: row.arguments,
    origin: row.origin,
    status: row.status,
    decided_by: row.decided_by,
    decided_at: row.decided_at ? new Date(row.decided_at).toISOString() : null,
    result: row.result ?? null,
    error_message: row.error_message,
    result_message_id: row.result_message_id,
    created_at: new Date(row.created_at).toISOString(),
  };
}
