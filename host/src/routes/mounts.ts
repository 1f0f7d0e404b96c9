import { mountCreateSchema } from '@agent-host/core';
import { route, type RouteFactory } from './route.js';

/** Knowledge mounts on agents (spec 4.8). */
export const mountRoutes: RouteFactory = (app) => {
  const knowledge = app.knowledge!;
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/mounts',
      access: { permission: 'knowledge.write', alsoRequires: ['agents.write'] },
      summary: 'Mount a knowledge source on an agent (managed_correction sources are refused)',
      success: { status: 201, description: 'The new mount' },
      body: mountCreateSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return knowledge.mounts.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/mounts',
      access: { permission: 'knowledge.read' },
      summary: "The agent's knowledge mounts",
      handler: async (req) => knowledge.mounts.list(agentId(req.params)),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id/mounts/:mount_id',
      access: { permission: 'knowledge.write', alsoRequires: ['agents.write'] },
      summary: 'Unmount by mount_id, falling back to the source_id of a mount of this agent',
      handler: async (req, _res, { operation }) => knowledge.mounts.delete(agentId(req.params), String(req.params.mount_id), operation),
    }),
  ];
};
