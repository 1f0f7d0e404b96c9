import { skillMountCreateSchema, skillMountUpdateSchema } from '@agent-host/core';
import { z } from 'zod';
import { skillMount } from '../schemas/skills.js';
import { listOf } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const agentNotFound = 'No such agent (AGENT_NOT_FOUND)';
const mountNotFound = { 404: 'The agent has no such skill mount (MOUNT_NOT_FOUND)' };
const notMountable =
  'The version is not released (SKILL_VERSION_NOT_RELEASED), the skill is disabled (SKILL_INACTIVE), or its MCP server is not active (SKILL_BACKEND_UNAVAILABLE)';

/** Skill mounts on agents (spec 4.12). */
export const skillMountRoutes: RouteFactory<'skills'> = (domains) => {
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  const mountId = (params: Record<string, string>) => String(params.mount_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/skill-mounts',
      access: { permission: 'skills.write', alsoRequires: ['agents.write'] },
      summary: 'Mount a released skill version (unreleased, or an mcp version whose server is not active: 409)',
      success: { status: 201, description: 'The new mount', schema: skillMount },
      refusals: { 404: agentNotFound, 409: `The skill is already mounted on the agent (MOUNT_EXISTS); or: ${notMountable}` },
      body: skillMountCreateSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return domains.skills.mounts.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/skill-mounts',
      access: { permission: 'skills.read' },
      summary: "The agent's skill mounts, highest priority first",
      success: { status: 200, description: 'The mounts', schema: listOf(skillMount) },
      refusals: { 404: agentNotFound },
      handler: async (req) => domains.skills.mounts.list(agentId(req.params)),
    }),
    route({
      method: 'patch',
      path: '/agents/:agent_id/skill-mounts/:mount_id',
      access: { permission: 'skills.write', alsoRequires: ['agents.write'] },
      summary: 'Change a mount: its policy, or another released version of the same skill',
      success: { status: 200, description: 'The mount as changed', schema: skillMount },
      refusals: { ...mountNotFound, 409: notMountable },
      body: skillMountUpdateSchema,
      handler: async (req, _res, { operation, body }) => domains.skills.mounts.update(agentId(req.params), mountId(req.params), body, operation),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id/skill-mounts/:mount_id',
      access: { permission: 'skills.write', alsoRequires: ['agents.write'] },
      summary: 'Unmount a skill',
      success: { status: 200, description: 'Unmounted', schema: z.object({ status: z.literal('deleted'), mount_id: z.string().uuid() }) },
      refusals: mountNotFound,
      handler: async (req, _res, { operation }) => domains.skills.mounts.delete(agentId(req.params), mountId(req.params), operation),
    }),
  ];
};
