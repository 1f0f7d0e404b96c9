import { createdPublicApiKey, publicApiKey, publicApiKeyBody } from '../schemas/fusion.js';
import { listOf } from '../validation.js';
import { route, type RouteFactory } from './route.js';

/** Public API keys of Fusion agents (spec 4.7, 5.7): the key is shown once; revoking holds at once on every instance. */
export const publicApiKeyRoutes: RouteFactory<'publicApiKeys'> = (domains) => {
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  return [
    route({
      method: 'get',
      path: '/agents/:agent_id/public-api-keys',
      access: { permission: 'agents.read' },
      summary: "The agent's public API keys, newest first, revoked ones included (never the keys themselves)",
      success: { status: 200, description: 'The keys', schema: listOf(publicApiKey) },
      handler: async (req) => domains.publicApiKeys.list(agentId(req.params)),
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/public-api-keys',
      access: { permission: 'agents.write' },
      summary: 'Make a public API key of a fusion agent; the key is in this response only',
      body: publicApiKeyBody,
      example: { label: 'billing system', expires_at: '2027-06-30T00:00:00Z' },
      success: { status: 201, description: 'The key with its plaintext api_key (shown once)', schema: createdPublicApiKey },
      refusals: { 409: 'Not a fusion agent (AGENT_NOT_FUSION)', 422: 'An empty label, or expires_at not in the future' },
      handler: async (req, res, { body, operation }) => {
        res.status(201);
        return domains.publicApiKeys.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/public-api-keys/:key_id/revoke',
      access: { permission: 'agents.write' },
      summary: 'Revoke a public API key: every instance refuses it from the next request',
      success: { status: 200, description: 'The revoked key', schema: publicApiKey },
      handler: async (req, _res, { operation }) => domains.publicApiKeys.revoke(agentId(req.params), String(req.params.key_id), operation),
    }),
  ];
};
