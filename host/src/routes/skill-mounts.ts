import { skillMountCreateSchema, skillMountUpdateSchema } from '@agent-host/core';
import { route, type RouteFactory } from './route.js';

/** Skill mounts on agents (spec 4.12). */
export const skillMountRoutes: RouteFactory = (app) => {
  const skills = app.skills!;
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  const mountId = (params: Record<string, string>) => String(params.mount_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/skill-mounts',
      access: { permission: 'skills.write', alsoRequires: ['agents.write'] },
      summary: 'Mount a released skill version (unreleased, or an mcp version whose server is not active: 409)',
      success: { status: 201, description: 'The new mount' },
      body: skillMountCreateSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return skills.mounts.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/skill-mounts',
      access: { permission: 'skills.read' },
      summary: "The agent's skill mounts, highest priority first",
      handler: async (req) => skills.mounts.list(agentId(req.params)),
    }),
    route({
      method: 'patch',
      path: '/agents/:agent_id/skill-mounts/:mount_id',
      access: { permission: 'skills.write', alsoRequires: ['agents.write'] },
      summary: 'Change a mount: its policy, or another released version of the same skill',
      body: skillMountUpdateSchema,
      handler: async (req, _res, { operation, body }) => skills.mounts.update(agentId(req.params), mountId(req.params), body, operation),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id/skill-mounts/:mount_id',
      access: { permission: 'skills.write', alsoRequires: ['agents.write'] },
      summary: 'Unmount a skill',
      handler: async (req, _res, { operation }) => skills.mounts.delete(agentId(req.params), mountId(req.params), operation),
    }),
  ];
};
