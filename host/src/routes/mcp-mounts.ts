import { mcpMountCreateSchema, mcpMountUpdateSchema, responsePreviewSchema } from '@agent-host/core';
import { route, type RouteFactory } from './route.js';

/** MCP mounts on agents and the response preview (spec 4.13). */
export const mcpMountRoutes: RouteFactory = (app) => {
  const mcp = app.mcp!;
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/mcp-mounts',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: 'Mount an MCP server on a chat agent with its policy (allowed_tools, tool_capability, timeout_ms, max_calls_per_turn, priority, is_active)',
      success: { status: 201, description: 'The new mount' },
      body: mcpMountCreateSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return mcp.mounts.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/mcp-mounts',
      access: { permission: 'mcp.read' },
      summary: "The agent's MCP mounts, highest priority first",
      handler: async (req) => mcp.mounts.list(agentId(req.params)),
    }),
    route({
      method: 'patch',
      path: '/agents/:agent_id/mcp-mounts/:mount_id',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: "Update a mount's policy",
      body: mcpMountUpdateSchema,
      handler: async (req, _res, { operation, body }) => mcp.mounts.update(agentId(req.params), String(req.params.mount_id), body, operation),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id/mcp-mounts/:mount_id',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: 'Unmount',
      handler: async (req, _res, { operation }) => mcp.mounts.delete(agentId(req.params), String(req.params.mount_id), operation),
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/mcp-response-preview',
      access: { permission: 'mcp.write', alsoRequires: ['agents.write'] },
      summary: "Call one tool through the agent's active mount (allowlist obeyed): raw and business payloads, field catalog",
      body: responsePreviewSchema,
      handler: async (req, _res, { operation, body }) => mcp.actions.responsePreview(agentId(req.params), body, operation),
    }),
  ];
};
