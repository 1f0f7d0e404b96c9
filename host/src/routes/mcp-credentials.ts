import { credentialCreateSchema, credentialRotateSchema, credentialUpdateSchema } from '@agent-host/core';
import { z } from 'zod';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();

/** MCP credentials (spec 4.13, 5.8): the secret goes in as `secret_payload` and never comes out. */
export const mcpCredentialRoutes: RouteFactory = (app) => {
  const mcp = app.mcp!;
  const id = (params: Record<string, string>) => String(params.credential_id);
  return [
    route({
      method: 'post',
      path: '/mcp-credentials',
      access: { permission: 'mcp.write' },
      summary: 'Create a credential from secret_payload (stored encrypted; the answer holds metadata only)',
      success: { status: 201, description: 'The new credential (never its secret)' },
      body: credentialCreateSchema,
      handler: async (_req, res, { operation, body }) => {
        res.status(201);
        return mcp.credentials.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/mcp-credentials',
      access: { permission: 'mcp.read' },
      summary: 'Credentials (metadata only), newest first',
      handler: async (req) => mcp.credentials.list(parseQuery(listQuery, req.query)),
    }),
    route({
      method: 'get',
      path: '/mcp-credentials/:credential_id',
      access: { permission: 'mcp.read' },
      summary: 'One credential, without its secret',
      handler: async (req) => mcp.credentials.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/mcp-credentials/:credential_id',
      access: { permission: 'mcp.write' },
      summary: 'Update metadata (name, description, scope); the secret changes only by rotate',
      body: credentialUpdateSchema,
      handler: async (req, _res, { operation, body }) => mcp.credentials.update(id(req.params), body, operation),
    }),
    route({
      method: 'del',
      path: '/mcp-credentials/:credential_id',
      access: { permission: 'mcp.write' },
      summary: 'Delete a credential no server uses',
      handler: async (req, _res, { operation }) => mcp.credentials.delete(id(req.params), operation),
    }),
    route({
      method: 'post',
      path: '/mcp-credentials/:credential_id/rotate',
      access: { permission: 'mcp.write' },
      summary: 'Replace the secret; the answer lists the servers and mounts to verify again',
      body: credentialRotateSchema,
      handler: async (req, _res, { operation, body }) => mcp.credentials.rotate(id(req.params), body.secret_payload, operation),
    }),
  ];
};
