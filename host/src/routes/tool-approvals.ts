import { listOf } from '../validation.js';
import { approvalSchema } from '../ws/contract.js';
import { route, type RouteFactory } from './route.js';

const decided = { status: 200, description: 'The approval with its decision', schema: approvalSchema };
const decisionRefusals = { 404: 'No such tool approval (TOOL_APPROVAL_NOT_FOUND)', 409: 'The call is already decided (TOOL_APPROVAL_DECIDED)' };

/**
 * The approval checkpoint's requests (spec 4.13): tool calls of mounts with `approval = "operator"`, held until an
 * operator approves (the call runs and its result is posted to the session) or rejects them.
 */
export const toolApprovalRoutes: RouteFactory<'mcp'> = (domains) => {
  return [
    route({
      method: 'get',
      path: '/sessions/:session_id/tool-approvals',
      access: { permission: 'mcp.read', alsoRequires: ['conversations.read'] },
      summary: "The session's held tool calls and their decisions, newest first",
      success: { status: 200, description: 'The approvals', schema: listOf(approvalSchema) },
      handler: async (req) => domains.mcp.approvals.listBySession(String(req.params.session_id)),
    }),
    route({
      method: 'post',
      path: '/tool-approvals/:approval_id/approve',
      access: { permission: 'mcp.write', alsoRequires: ['conversations.write'] },
      summary: 'Approve a held tool call: it runs now and its result is posted to the session',
      success: decided,
      refusals: decisionRefusals,
      handler: async (req, _res, { operation }) => domains.mcp.approvals.decide(String(req.params.approval_id), 'approve', operation),
    }),
    route({
      method: 'post',
      path: '/tool-approvals/:approval_id/reject',
      access: { permission: 'mcp.write', alsoRequires: ['conversations.write'] },
      summary: 'Reject a held tool call: it is never made',
      success: decided,
      refusals: decisionRefusals,
      handler: async (req, _res, { operation }) => domains.mcp.approvals.decide(String(req.params.approval_id), 'reject', operation),
    }),
  ];
};
