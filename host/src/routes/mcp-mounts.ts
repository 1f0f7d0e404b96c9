import { mcpMountCreateSchema, mcpMountUpdateSchema, responsePreviewSchema } from '@agent-host/core';
import { z } from 'zod';
import { mcpMount, responsePreview } from '../schemas/mcp.js';
import { listOf } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const agentNotFound = 'No such agent (AGENT_NOT_FOUND)';
const mountNotFound = { 404: 'The agent has no such MCP mount (MOUNT_NOT_FOUND)' };
const notChat = 'The agent is not a chat agent (AGENT_TYPE_UNSUPPORTED)';

/** MCP mounts on agents and the response preview (spec 4.13). */
export const mcpMountRoutes: RouteFactory<'mcp'> = (domains) => {
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/mcp-mounts',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: 'Mount an MCP server on a chat agent with its policy (allowed_tools, tool_capability, timeout_ms, max_calls_per_turn, priority, is_active)',
      success: { status: 201, description: 'The new mount', schema: mcpMount },
      refusals: { 404: agentNotFound, 409: `The server is already mounted on the agent (MOUNT_EXISTS); or: ${notChat}` },
      body: mcpMountCreateSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return domains.mcp.mounts.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/mcp-mounts',
      access: { permission: 'mcp.read' },
      summary: "The agent's MCP mounts, highest priority first",
      success: { status: 200, description: 'The mounts', schema: listOf(mcpMount) },
      refusals: { 404: agentNotFound },
      handler: async (req) => domains.mcp.mounts.list(agentId(req.params)),
    }),
    route({
      method: 'patch',
      path: '/agents/:agent_id/mcp-mounts/:mount_id',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: "Update a mount's policy",
      body: mcpMountUpdateSchema,
      success: { status: 200, description: 'The mount as changed', schema: mcpMount },
      refusals: mountNotFound,
      handler: async (req, _res, { operation, body }) => domains.mcp.mounts.update(agentId(req.params), String(req.params.mount_id), body, operation),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id/mcp-mounts/:mount_id',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: 'Unmount',
      success: {
        status: 200,
        description: 'Unmounted',
        schema: z.object({ status: z.literal('deleted'), mount_id: z.string().uuid(), mcp_server_id: z.string().uuid() }),
      },
      refusals: mountNotFound,
      handler: async (req, _res, { operation }) => domains.mcp.mounts.delete(agentId(req.params), String(req.params.mount_id), operation),
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/mcp-response-preview',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: "Call one tool through the agent's active mount (allowlist obeyed): raw and business payloads, field catalog",
      body: responsePreviewSchema,
      success: { status: 200, description: 'What the tool gave, as the chat pipeline would see it', schema: responsePreview },
      refusals: {
        404: agentNotFound,
        409: `The server is not mounted and active on the agent (MCP_SERVER_NOT_MOUNTED), or the tool is not allowed (TOOL_NOT_ALLOWED); or: ${notChat}`,
      },
      handler: async (req, _res, { operation, body }) => domains.mcp.actions.responsePreview(agentId(req.params), body, operation),
    }),
  ];
};
