import { mountCreateSchema } from '@agent-host/core';
import { z } from 'zod';
import { listOf, timestamp } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const mount = z
  .object({
    mount_id: z.string().uuid(),
    agent_id: z.string().uuid(),
    source_id: z.string().uuid(),
    source_name: z.string(),
    source_kind: z.enum(['standard', 'managed_correction']),
    created_at: timestamp,
  })
  .meta({ id: 'KnowledgeMount' });
const unmounted = z.object({
  status: z.literal('deleted'),
  mount_id: z.string().uuid(),
  source_id: z.string().uuid(),
  matched_by: z.enum(['mount_id', 'source_id']).describe('Which id the path named'),
});
const agentNotFound = 'No such agent (AGENT_NOT_FOUND)';

/** Knowledge mounts on agents (spec 4.8). */
export const mountRoutes: RouteFactory<'knowledge'> = (domains) => {
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/mounts',
      access: { permission: 'knowledge.write', alsoRequires: ['agents.write'] },
      summary: 'Mount a knowledge source on an agent (managed_correction sources are refused)',
      success: { status: 201, description: 'The new mount', schema: mount },
      refusals: {
        404: `${agentNotFound}, or no such knowledge source (KNOWLEDGE_SOURCE_NOT_FOUND)`,
        409: 'The source is already mounted (MOUNT_EXISTS), or is a managed_correction source (MANAGED_SOURCE_READ_ONLY)',
      },
      body: mountCreateSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return domains.knowledge.mounts.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/mounts',
      access: { permission: 'knowledge.read' },
      summary: "The agent's knowledge mounts",
      success: { status: 200, description: 'The mounts', schema: listOf(mount) },
      refusals: { 404: agentNotFound },
      handler: async (req) => domains.knowledge.mounts.list(agentId(req.params)),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id/mounts/:mount_id',
      access: { permission: 'knowledge.write', alsoRequires: ['agents.write'] },
      summary: 'Unmount by mount_id, falling back to the source_id of a mount of this agent',
      success: { status: 200, description: 'Unmounted', schema: unmounted },
      refusals: { 404: 'The agent has no such mount (MOUNT_NOT_FOUND)', 409: 'The mount of a managed_correction source is kept (MANAGED_SOURCE_READ_ONLY)' },
      handler: async (req, _res, { operation }) => domains.knowledge.mounts.delete(agentId(req.params), String(req.params.mount_id), operation),
    }),
  ];
};
