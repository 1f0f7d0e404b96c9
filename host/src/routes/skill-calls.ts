import { SKILL_CALL_STATUSES } from '@agent-host/core';
import { z } from 'zod';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const callQuery = z.object({ ...pagingFields, status: z.enum(SKILL_CALL_STATUSES).optional() }).strict();

/** The skill-call audit, per agent (spec 4.12) and per session (spec 4.4): it holds what users asked, so reading it also needs conversations.read. */
export const skillCallRoutes: RouteFactory = (app) => {
  const skills = app.skills!;
  return [
    route({
      method: 'get',
      path: '/agents/:agent_id/skill-calls',
      access: { permission: 'skills.read', alsoRequires: ['conversations.read'] },
      summary: "The agent's skill calls, newest first, optionally by status",
      handler: async (req) => skills.calls.listForAgent(String(req.params.agent_id), parseQuery(callQuery, req.query)),
    }),
    route({
      method: 'get',
      path: '/sessions/:session_id/skill-calls',
      access: { permission: 'skills.read', alsoRequires: ['conversations.read'] },
      summary: "The session's skill calls, newest first, optionally by status",
      handler: async (req) => skills.calls.listForSession(String(req.params.session_id), parseQuery(callQuery, req.query)),
    }),
  ];
};
