import { SKILL_CALL_STATUSES } from '@agent-host/core';
import { z } from 'zod';
import { skillCall } from '../schemas/skills.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const callQuery = z.object({ ...pagingFields, status: z.enum(SKILL_CALL_STATUSES).optional() }).strict();
const callPage = { status: 200, description: 'A page of skill calls', schema: pageOf(skillCall) };

/** The skill-call audit, per agent (spec 4.12) and per session (spec 4.4): it holds what users asked, so reading it also needs conversations.read. */
export const skillCallRoutes: RouteFactory<'skills'> = (domains) => {
  return [
    route({
      method: 'get',
      path: '/agents/:agent_id/skill-calls',
      access: { permission: 'skills.read', alsoRequires: ['conversations.read'] },
      summary: "The agent's skill calls, newest first, optionally by status",
      query: callQuery,
      success: callPage,
      handler: async (req, _res, { query }) => domains.skills.calls.listForAgent(String(req.params.agent_id), query),
    }),
    route({
      method: 'get',
      path: '/sessions/:session_id/skill-calls',
      access: { permission: 'skills.read', alsoRequires: ['conversations.read'] },
      summary: "The session's skill calls, newest first, optionally by status",
      query: callQuery,
      success: callPage,
      handler: async (req, _res, { query }) => domains.skills.calls.listForSession(String(req.params.session_id), query),
    }),
  ];
};
