import { route, type RouteFactory } from './route.js';

/**
 * The approval checkpoint's requests (spec 4.13): tool calls of mounts with `approval = "operator"`, held until an
 * operator approves (the call runs and its result is posted to the session) or rejects them.
 */
export const toolApprovalRoutes: RouteFactory = (app) => {
  const mcp = app.mcp!;
  return [
    route({
      method: 'get',
      path: '/sessions/:session_id/tool-approvals',
      access: { permission: 'mcp.read', alsoRequires: ['conversations.read'] },
      summary: "The session's held tool calls and their decisions, newest first",
      handler: async (req) => mcp.approvals.listBySession(String(req.params.session_id)),
    }),
    route({
      method: 'post',
      path: '/tool-approvals/:approval_id/approve',
      access: { permission: 'mcp.write', alsoRequires: ['conversations.write'] },
      summary: 'Approve a held tool call: it runs now and its result is posted to the session',
      handler: async (req, _res, { operation }) => mcp.approvals.decide(String(req.params.approval_id), 'approve', operation),
    }),
    route({
      method: 'post',
      path: '/tool-approvals/:approval_id/reject',
      access: { permission: 'mcp.write', alsoRequires: ['conversations.write'] },
      summary: 'Reject a held tool call: it is never made',
      handler: async (req, _res, { operation }) => mcp.approvals.decide(String(req.params.approval_id), 'reject', operation),
    }),
  ];
};
