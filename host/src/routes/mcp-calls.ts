import { z } from 'zod';
import { mcpCall } from '../schemas/mcp.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const pageQuery = z.object(pagingFields).strict();
const callPage = { status: 200, description: 'A page of MCP calls', schema: pageOf(mcpCall) };

/** MCP call audits (spec 4.13): they hold what users asked, so reading them also needs conversations.read. */
export const mcpCallRoutes: RouteFactory<'mcp'> = (domains) => {
  return [
    route({
      method: 'get',
      path: '/sessions/:session_id/mcp-calls',
      access: { permission: 'mcp.read', alsoRequires: ['conversations.read'] },
      summary: "The session's MCP calls, blocks and skips, newest first",
      query: pageQuery,
      success: callPage,
      handler: async (req, _res, { query }) => domains.mcp.audits.listBySession(String(req.params.session_id), query),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/mcp-calls',
      access: { permission: 'mcp.read', alsoRequires: ['conversations.read'] },
      summary: "The agent's MCP calls, blocks and skips, newest first",
      query: pageQuery,
      success: callPage,
      handler: async (req, _res, { query }) => domains.mcp.audits.listByAgent(String(req.params.agent_id), query),
    }),
  ];
};
