import { operatorFor, type AdminPrincipal } from '@agent-host/core';
import { z } from 'zod';
import { originOf } from '../access/route-access.js';
import { pageOf, pagingFields } from '../validation.js';
import { messageSchema, sessionStateSchema, takeoverEventSchema } from '../ws/contract.js';
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
export const takeoverRoutes: RouteFactory<'takeover'> = (domains) => {
  const sessionId = (params: Record<string, string>) => String(params.session_id);
  // `force` may come in the query or the body (spec 4.4: "query/body force").
  const force = (query: { force?: 'true' | 'false' }, body: { force?: boolean } | undefined) => body?.force ?? query.force === 'true';
  const transition = (action: 'takeover' | 'release', summary: string) =>
    route({
      method: 'post',
      path: `/sessions/:session_id/${action}`,
      access: { permission: 'conversations.write' },
      summary,
      body: forceBody,
      query: forceQuery,
      success: { status: 200, description: 'The session state after the change', schema: sessionStateSchema },
      refusals: {
        409:
          action === 'takeover'
            ? 'The agent has no human takeover (TAKEOVER_NOT_ENABLED), or another operator holds the session and force is not set (SESSION_TAKEN_OVER)'
            : 'The session is not taken over (SESSION_NOT_TAKEN_OVER), or another operator holds it and force is not set (SESSION_TAKEN_OVER)',
      },
      handler: async (req, _res, { principal, body, query }) =>
        domains.takeover[action](sessionId(req.params), restOperator(req, principal), force(query, body)),
    });
  return [
    transition('takeover', 'Take the session over from the AI (HUMAN_ACTIVE); force=true takes it from another operator'),
    transition('release', 'Hand the session back to the AI (AI_ACTIVE); only the owner, or force=true'),
    route({
      method: 'post',
      path: '/sessions/:session_id/manual-messages',
      access: { permission: 'conversations.write' },
      summary: 'A human reply from the operator who took the session over (role agent; no turn)',
      success: { status: 201, description: 'The stored human reply', schema: messageSchema },
      refusals: {
        409: 'The session is not taken over (SESSION_NOT_TAKEN_OVER), or by another operator (SESSION_TAKEN_OVER)',
      },
      body: manualMessageBody,
      handler: async (req, res, { principal, body }) => {
        const message = await domains.takeover.manualMessage(sessionId(req.params), restOperator(req, principal), body.content);
        res.status(201);
        return message;
      },
    }),
    route({
      method: 'get',
      path: '/sessions/:session_id/takeover-events',
      access: { permission: 'conversations.read' },
      summary: 'The durable takeover event stream, oldest first',
      query: pageQuery,
      success: { status: 200, description: 'A page of takeover events', schema: pageOf(takeoverEventSchema) },
      handler: async (req, _res, { query }) => domains.takeover.listEvents(sessionId(req.params), query),
    }),
  ];
};
