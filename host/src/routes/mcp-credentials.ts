import { credentialCreateSchema, credentialRotateSchema, credentialUpdateSchema } from '@agent-host/core';
import { z } from 'zod';
import { credential, rotatedCredential } from '../schemas/mcp.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();

/** MCP credentials (spec 4.13, 5.8): the secret goes in as `secret_payload` and never comes out. */
export const mcpCredentialRoutes: RouteFactory<'mcp'> = (domains) => {
  const id = (params: Record<string, string>) => String(params.credential_id);
  return [
    route({
      method: 'post',
      path: '/mcp-credentials',
      access: { permission: 'mcp.write' },
      summary: 'Create a credential from secret_payload (stored encrypted; the answer holds metadata only)',
      success: { status: 201, description: 'The new credential (never its secret)', schema: credential },
      body: credentialCreateSchema,
      example: { name: 'Tracking API key', description: 'Read-only key of the tracking service', secret_payload: { API_KEY: 'tk_live_0123456789' } },
      handler: async (_req, res, { operation, body }) => {
        res.status(201);
        return domains.mcp.credentials.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/mcp-credentials',
      access: { permission: 'mcp.read' },
      summary: 'Credentials (metadata only), newest first',
      query: listQuery,
      success: { status: 200, description: 'A page of credentials', schema: pageOf(credential) },
      handler: async (_req, _res, { query }) => domains.mcp.credentials.list(query),
    }),
    route({
      method: 'get',
      path: '/mcp-credentials/:credential_id',
      access: { permission: 'mcp.read' },
      summary: 'One credential, without its secret',
      success: { status: 200, description: 'The credential', schema: credential },
      handler: async (req) => domains.mcp.credentials.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/mcp-credentials/:credential_id',
      access: { permission: 'mcp.write' },
      summary: 'Update metadata (name, description, scope); the secret changes only by rotate',
      body: credentialUpdateSchema,
      success: { status: 200, description: 'The credential as changed', schema: credential },
      refusals: { 409: 'Another server uses it, so it cannot be scoped to one (CREDENTIAL_IN_USE)' },
      handler: async (req, _res, { operation, body }) => domains.mcp.credentials.update(id(req.params), body, operation),
    }),
    route({
      method: 'del',
      path: '/mcp-credentials/:credential_id',
      access: { permission: 'mcp.write' },
      summary: 'Delete a credential no server uses',
      success: { status: 200, description: 'Deleted', schema: z.object({ status: z.literal('deleted'), credential_id: z.string().uuid() }) },
      refusals: { 409: 'A server uses it (CREDENTIAL_IN_USE)' },
      handler: async (req, _res, { operation }) => domains.mcp.credentials.delete(id(req.params), operation),
    }),
    route({
      method: 'post',
      path: '/mcp-credentials/:credential_id/rotate',
      access: { permission: 'mcp.write' },
      summary: 'Replace the secret; the answer lists the servers and mounts to verify again',
      body: credentialRotateSchema,
      success: { status: 200, description: 'The credential, with the servers and mounts to verify again', schema: rotatedCredential },
      handler: async (req, _res, { operation, body }) => domains.mcp.credentials.rotate(id(req.params), body.secret_payload, operation),
    }),
  ];
};
