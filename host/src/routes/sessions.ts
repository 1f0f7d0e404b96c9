import { revealsCorrectionPublication } from '@agent-host/core';
import { z } from 'zod';
import { messageSchema, sessionStateSchema } from '../ws/contract.js';
import { turn, turnContext } from '../schemas/turns.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const sessionQuery = z
  .object({
    ...pagingFields,
    agent_id: z.string().uuid().optional(),
    // Substring search runs on trigram indexes, which need three characters.
    q: z.string().trim().min(3, 'search for at least 3 characters').max(200).optional(),
    date_from: z.coerce.date().optional(),
    date_to: z.coerce.date().optional(),
  })
  .strict();
const pageQuery = z.object(pagingFields).strict();
const sessionSummary = sessionStateSchema.extend({
  agent_name: z.string().nullable(),
  created_at: z.string().datetime(),
  handoff_requested_at: z
    .string()
    .datetime()
    .nullable()
    .describe("When a grounded agent last asked for a person (low_confidence_handoff), while the session is the AI's and no operator has taken it over since"),
});

export const sessionRoutes: RouteFactory<'sessionTurns' | 'sessions'> = (domains) => {
  const sessionId = (params: Record<string, string>) => String(params.session_id);
  return [
    route({
      method: 'post',
      path: '/sessions/:session_id/cancel',
      access: { permission: 'conversations.write' },
      summary: "Cancel the session's running turn: its caller gets an error event, the turn is stored as cancelled",
      success: {
        status: 202,
        description: 'The running turn is asked to stop; it stops within a second, on whichever instance runs it',
        schema: z.object({ session_id: z.string(), turn_id: z.string().uuid().nullable(), status: z.literal('cancelling') }),
      },
      refusals: { 409: 'The session is not answering anything (NO_TURN_RUNNING)' },
      handler: async (req, res, context) => {
        res.status(202);
        return domains.sessionTurns.cancel(sessionId(req.params), context.operation);
      },
    }),
    route({
      method: 'get',
      path: '/sessions',
      access: { permission: 'conversations.read' },
      summary: 'Sessions, most recent first; agent_id matches the binding or the latest turn',
      query: sessionQuery,
      success: { status: 200, description: 'A page of sessions', schema: pageOf(sessionSummary) },
      handler: async (_req, _res, { query }) => domains.sessions.listSessions(query),
    }),
    route({
      method: 'get',
      path: '/sessions/:session_id/messages',
      access: { permission: 'conversations.read' },
      summary: 'Message history, oldest first',
      query: pageQuery,
      success: { status: 200, description: 'A page of messages', schema: pageOf(messageSchema) },
      handler: async (req, _res, { query }) => domains.sessions.listMessages(sessionId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/sessions/:session_id/turns',
      access: { permission: 'conversations.read' },
      summary: 'Turns, newest first, with model, generation_usage and the correction summary',
      query: pageQuery,
      success: { status: 200, description: 'A page of turns', schema: pageOf(turn) },
      handler: async (req, _res, { principal, query }) =>
        domains.sessions.listTurns(sessionId(req.params), query, revealsCorrectionPublication(principal!.permissions)),
    }),
    route({
      method: 'get',
      path: '/sessions/:session_id/turns/:turn_id/context',
      access: { permission: 'conversations.read', alsoRequires: ['mcp.read', 'skills.read'] },
      summary: 'The turn context snapshot: context_payload, rag/skill/mcp context and calls, the turn with its usage',
      success: { status: 200, description: 'The snapshot', schema: turnContext },
      refusals: { 404: 'No such turn in this session (TURN_NOT_FOUND)' },
      handler: async (req, _res, { principal }) =>
        domains.sessions.turnContext(sessionId(req.params), String(req.params.turn_id), revealsCorrectionPublication(principal!.permissions)),
    }),
  ];
};
