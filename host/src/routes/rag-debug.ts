import { ragDebugSchema } from '@agent-host/core';
import { ragDebugReport } from '../schemas/knowledge.js';
import { route, type RouteFactory } from './route.js';

/** `POST /sessions/{session_id}/turns/{turn_id}/rag-debug` (spec 4.4): needs only conversations.read. */
export const ragDebugRoutes: RouteFactory<'knowledge'> = (domains) => [
  route({
    method: 'post',
    path: '/sessions/:session_id/turns/:turn_id/rag-debug',
    access: { permission: 'conversations.read' },
    summary: "Re-run a turn's retrieval (query, threshold, top_k overridable): mounted sources, vector candidates, final chunks, keyword fallback, conclusion",
    body: ragDebugSchema,
    success: { status: 200, description: 'The retrieval run again, step by step', schema: ragDebugReport },
    refusals: { 404: 'No such turn in this session (TURN_NOT_FOUND)' },
    handler: async (req, _res, { body }) => domains.knowledge.ragDebug(String(req.params.session_id), String(req.params.turn_id), body),
  }),
];
