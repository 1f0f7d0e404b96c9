import { issueSessionId } from '@agent-host/core';
import { NotFoundError, TooManyRequestsError } from '@agent-host/sdk';
import { z } from 'zod';
import { sessionStateSchema } from '../ws/contract.js';
import { route, type RouteFactory } from './route.js';

/**
 * `POST /public/agents/{agent_id}/sessions`: starts a chat session of a public agent under an id the server
 * issues, for a customer who talks over `/public/ws/{session_id}` before any `POST /stream`. The id is the
 * session's only key, so it is never one a client chose.
 */
/** What the route answers: the state of the new session (`presentSessionState`). */
const issuedSession = sessionStateSchema.extend({
  session_id: z.string().describe('The server-issued id: send it as thread_id to POST /stream, or join /public/ws/{session_id}'),
});

export const publicSessionRoutes: RouteFactory<'agents' | 'takeover' | 'trafficLimits'> = (domains) => {
  return [
    route({
      method: 'post',
      path: '/public/agents/:agent_id/sessions',
      access: { public: true },
      summary: 'Start a chat session of a public agent; answers its server-issued session_id',
      success: { status: 201, description: 'The new session', schema: issuedSession },
      refusals: { 404: 'No active public_anonymous agent has this id', 429: 'Too many session starts from this address; see Retry-After' },
      handler: async (req, res, { origin }) => {
        const agentId = String(req.params.agent_id);
        const refusal = await domains.trafficLimits.takeHandshake(origin.clientIp);
        if (refusal) throw new TooManyRequestsError(refusal.detail, refusal.retryAfterSeconds);
        // Through the runtime config cache, as the turns and sockets of the session will read it.
        const agent = await domains.agents.runtime(agentId).catch(() => undefined);
        if (agent?.status !== 'active' || agent.public_access_mode !== 'public_anonymous')
          throw new NotFoundError(`no public agent ${agentId}`, { code: 'AGENT_NOT_FOUND' });
        res.status(201);
        return domains.takeover.issue(issueSessionId(), agent.agent_id);
      },
    }),
  ];
};
