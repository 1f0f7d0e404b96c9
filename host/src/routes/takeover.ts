import { operatorFor, type AdminPrincipal } from '@agent-host/core';
import { z } from 'zod';
import { originOf } from '../access/route-access.js';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const forceBody = z.object({ force: z.boolean().optional() }).strict();
const forceQuery = z.object({ force: z.enum(['true', 'false']).optional() }).strict();
const pageQuery = z.object(pagingFields).strict();
// Emptiness and length are checked by the takeover service, for REST and WebSocket alike.
const manualMessageBody = z.object({ content: z.string() }).strict();

/** Over REST the operator is the logged-in administrator. */
const restOperator = (req: Parameters<typeof originOf>[0], principal: AdminPrincipal | undefined) =>
  operatorFor(principal!, 'rest', { client_ip: originOf(req).clientIp });

/** Human takeover over REST (spec 3.1, 4.4); the WebSocket gateway offers the same transitions. */
export const takeoverRoutes: RouteFactory = (app) => {
  const takeover = app.takeover!;
  const sessionId = (params: Record<string, string>) => String(params.session_id);
  // `force` may come in the query or the body (spec 4.4: "query/body force").
  const force = (query: unknown, body: { force?: boolean } | undefined) => body?.force ?? parseQuery(forceQuery, query).force === 'true';
  const transition = (action: 'takeover' | 'release', summary: string) =>
    route({
      method: 'post',
      path: `/sessions/:session_id/${action}`,
      access: { permission: 'conversations.write' },
      summary,
      body: forceBody,
      handler: async (req, _res, { principal, body }) =>
        takeover[action](sessionId(req.params), restOperator(req, principal), force(req.query, body)),
    });
  return [
    transition('takeover', 'Take the session over from the AI (HUMAN_ACTIVE); force=true takes it from another operator'),
    transition('release', 'Hand the session back to the AI (AI_ACTIVE); only the owner, or force=true'),
    route({
      method: 'post',
      path: '/sessions/:session_id/manual-messages',
      access: { permission: 'conversations.write' },
      summary: 'A human reply from the operator who took the session over (role agent; no turn)',
      success: { status: 201, description: 'The stored human reply' },
      body: manualMessageBody,
      handler: async (req, res, { principal, body }) => {
        const message = await takeover.manualMessage(sessionId(req.params), restOperator(req, principal), body.content);
        res.status(201);
        return message;
      },
    }),
    route({
      method: 'get',
      path: '/sessions/:session_id/takeover-events',
      access: { permission: 'conversations.read' },
      summary: 'The durable takeover event stream, oldest first',
      handler: async (req) => takeover.listEvents(sessionId(req.params), parseQuery(pageQuery, req.query)),
    }),
  ];
};
