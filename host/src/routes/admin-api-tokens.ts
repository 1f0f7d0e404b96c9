import { z } from 'zod';
import { route, type RouteFactory } from './route.js';

const tokenView = z.object({
  token_id: z.string().uuid(),
  name: z.string(),
  token_prefix: z.string().describe('The first characters of the token, to recognise it'),
  permissions: z.array(z.string()).nullable().describe("null: the administrator's permissions, as they change"),
  expires_at: z.string().datetime().nullable(),
  revoked_at: z.string().datetime().nullable(),
  last_used_at: z.string().datetime().nullable().describe('To the minute'),
  created_at: z.string().datetime(),
});

const createBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    permissions: z.array(z.string()).max(100).nullable().optional(),
    expires_in_days: z.number().int().min(1).max(3650).nullable().optional(),
  })
  .strict();

/** `/admin/api-tokens`: an administrator's own API tokens, for machines that call the control plane. */
export const adminApiTokenRoutes: RouteFactory<'apiTokens'> = (domains) => {
  return [
    route({
      method: 'post',
      path: '/admin/api-tokens',
      access: { login: true, challenge: true },
      summary: 'Make an API token acting as you (all your permissions or a subset); the token is in this answer only',
      body: createBody,
      success: {
        status: 201,
        description: 'The token: send it as `Authorization: Bearer <token>`. Only its hash is kept; it cannot be shown again.',
        schema: tokenView.extend({ token: z.string() }),
      },
      refusals: { 403: 'The challenge is missing or refused, or a permission you do not hold was asked for' },
      handler: async (_req, res, { body, operation, challengeToken }) => {
        res.status(201);
        return domains.apiTokens.create(body, { ...operation, challengeToken });
      },
    }),
    route({
      method: 'get',
      path: '/admin/api-tokens',
      access: { login: true },
      summary: 'Your API tokens, newest first, revoked ones included (never the tokens themselves)',
      success: { status: 200, description: 'The tokens', schema: z.object({ items: z.array(tokenView) }) },
      handler: async (_req, _res, { operation }) => domains.apiTokens.list(operation.operator),
    }),
    route({
      method: 'del',
      path: '/admin/api-tokens/:token_id',
      access: { login: true },
      summary: 'Revoke one of your API tokens; it stops working at once',
      success: { status: 204, description: 'Revoked' },
      refusals: { 404: 'You have no such token (API_TOKEN_NOT_FOUND)' },
      handler: async (req, res, { operation }) => {
        await domains.apiTokens.revoke(String(req.params.token_id), operation);
        res.send(204);
      },
    }),
  ];
};
