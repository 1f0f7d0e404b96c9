import { serverCreateSchema, serverUpdateSchema, serverViewSchema, testCallSchema } from '@agent-host/core';
import { z } from 'zod';
import { healthCheck, testCall } from '../schemas/mcp.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();

/** MCP servers, their health check and test call (spec 4.13). */
export const mcpServerRoutes: RouteFactory<'mcp'> = (domains) => {
  const id = (params: Record<string, string>) => String(params.mcp_server_id);
  return [
    route({
      method: 'post',
      path: '/mcp-servers',
      access: { permission: 'mcp.write' },
      summary: 'Register an MCP server; transport_type must be a registered tool backend, connection_config is checked by it',
      success: { status: 201, description: 'The new MCP server', schema: serverViewSchema },
      refusals: { 409: 'A server with this name exists (MCP_SERVER_EXISTS)' },
      body: serverCreateSchema,
      handler: async (_req, res, { operation, body }) => {
        res.status(201);
        return domains.mcp.servers.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/mcp-servers',
      access: { permission: 'mcp.read' },
      summary: 'MCP servers, newest first ({items, next_cursor, limit})',
      query: listQuery,
      success: { status: 200, description: 'A page of MCP servers', schema: pageOf(serverViewSchema) },
      handler: async (_req, _res, { query }) => domains.mcp.servers.list(query),
    }),
    route({
      method: 'get',
      path: '/mcp-servers/:mcp_server_id',
      access: { permission: 'mcp.read' },
      summary: 'One MCP server',
      success: { status: 200, description: 'The MCP server', schema: serverViewSchema },
      handler: async (req) => domains.mcp.servers.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/mcp-servers/:mcp_server_id',
      access: { permission: 'mcp.write' },
      summary: 'Update an MCP server',
      success: { status: 200, description: 'The MCP server as changed', schema: serverViewSchema },
      refusals: { 409: 'The change would send a credential somewhere new, or the name is taken (CREDENTIAL_CONFIRMATION_REQUIRED, MCP_SERVER_EXISTS)' },
      body: serverUpdateSchema,
      handler: async (req, _res, { operation, body }) => domains.mcp.servers.update(id(req.params), body, operation),
    }),
    route({
      method: 'del',
      path: '/mcp-servers/:mcp_server_id',
      access: { permission: 'mcp.write' },
      summary: 'Delete an MCP server that no agent mounts',
      success: { status: 200, description: 'Deleted', schema: z.object({ status: z.literal('deleted'), mcp_server_id: z.string().uuid() }) },
      refusals: { 409: 'An agent mounts the server (MCP_SERVER_IN_USE)' },
      handler: async (req, _res, { operation }) => domains.mcp.servers.delete(id(req.params), operation),
    }),
    route({
      method: 'post',
      path: '/mcp-servers/:mcp_server_id/health-check',
      access: { permission: 'mcp.write' },
      summary: 'Connectivity check; sets the server status to active or error (inactive stays)',
      success: { status: 200, description: 'What the check found; ok is false when the server did not answer well', schema: healthCheck },
      handler: async (req, _res, { operation }) => domains.mcp.actions.healthCheck(id(req.params), operation),
    }),
    route({
      method: 'post',
      path: '/mcp-servers/:mcp_server_id/test-call',
      access: { permission: 'mcp.write' },
      summary: 'tools/list (the tools and the raw answer) or tools/call, optionally with another credential and timeout',
      body: testCallSchema,
      success: { status: 200, description: 'The tools or the call result; status says whether the server answered', schema: testCall },
      refusals: { 409: 'The credential does not fit this server (CREDENTIAL_SCOPE_MISMATCH, CREDENTIAL_DESTINATION_REFUSED)' },
      handler: async (req, _res, { operation, body }) => domains.mcp.actions.testCall(id(req.params), body, operation),
    }),
  ];
};
