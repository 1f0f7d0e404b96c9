import { issueSessionId } from '@agent-host/core';
import { NotFoundError } from '@agent-host/sdk';
import { route, type RouteFactory } from './route.js';

/**
 * `POST /public/agents/{agent_id}/sessions`: starts a chat session of a public agent under an id the server
 * issues, for a customer who talks over `/public/ws/{session_id}` before any `POST /stream`. The id is the
 * session's only key, so it is never one a client chose.
 */
export const publicSessionRoutes: RouteFactory = (app) => {
  const agents = app.agents!;
  const takeover = app.takeover!;
  const limits = app.trafficLimits!;
  return [
    route({
      method: 'post',
      path: '/public/agents/:agent_id/sessions',
      access: { public: true },
      summary: 'Start a chat session of a public agent; answers its server-issued session_id',
      handler: async (req, res, { origin }) => {
        const agentId = String(req.params.agent_id);
        const refusal = await limits.takeHandshake(origin.clientIp);
        if (refusal) {
          res.header('retry-after', String(refusal.retryAfterSeconds));
          res.send(429, { detail: refusal.detail, code: 'rate_limited' });
          return;
        }
        const agent = await agents.get(agentId).catch(() => undefined);
        if (agent?.status !== 'active' || agent.public_access_mode !== 'public_anonymous') throw new NotFoundError(`no public agent ${agentId}`);
        res.status(201);
        return takeover.issue(issueSessionId(), agent.agent_id);
      },
    }),
  ];
};
