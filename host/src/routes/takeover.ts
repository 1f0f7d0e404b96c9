import type { AdminPrincipal, Operator } from '@agent-host/core';
import { z } from 'zod';
import { originOf } from '../access/route-access.js';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const forceBody = z.object({ force: z.boolean().optional() }).strict();
const forceQuery = z.object({ force: z.enum(['true', 'false']).optional() }).strict();
const pageQuery = z.object(pagingFields).strict();

/** Over REST the operator is the logged-in administrator (WebSocket operators name themselves with `operator_id`). */
const operatorOf = (principal: AdminPrincipal | undefined, clientIp: string | null): Operator => ({
  operator_id: principal!.admin_user_id,
  operator_name: principal!.display_name || principal!.username,
  admin_user_id: principal!.admin_user_id,
  channel: 'rest',
  client_ip: clientIp,
});

/** Human takeover over REST (spec 3.1, 4.4); the WebSocket gateway offers the same transitions. */
export const takeoverRoutes: RouteFactory = (app) => {
  const takeover = app.takeover!;
  const manualMessageBody = z.object({ content: z.string().trim().min(1).max(app.config.agent.message_max_length) }).strict();
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
        takeover[action](sessionId(req.params), operatorOf(principal, originOf(req).clientIp), force(req.query, body)),
    });
  return [
    transition('takeover', 'Take the session over from the AI (HUMAN_ACTIVE); force=true takes it from another operator'),
    transition('release', 'Hand the session back to the AI (AI_ACTIVE); only the owner, or force=true'),
    route({
      method: 'post',
      path: '/sessions/:session_id/manual-messages',
      access: { permission: 'conversations.write' },
      summary: 'A human reply from the operator who took the session over (role agent; no turn)',
      body: manualMessageBody,
      handler: async (req, res, { principal, body }) => {
        res.status(201);
        return takeover.manualMessage(sessionId(req.params), operatorOf(principal, originOf(req).clientIp), body.content);
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
