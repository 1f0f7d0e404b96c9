import { agentCreateSchema, agentUpdateSchema } from '@agent-host/core';
import { z } from 'zod';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();
const snapshotBody = z.object({ note: z.string().max(2000).nullable().optional() }).strict();

export const agentRoutes: RouteFactory = (app) => {
  const agents = app.agents!;
  const id = (params: Record<string, string>) => String(params.agent_id);
  return [
    route({
      method: 'get',
      path: '/agents',
      access: { permission: 'agents.read' },
      summary: 'List agents ({items, next_cursor, limit})',
      handler: async (req) => agents.list(parseQuery(listQuery, req.query)),
    }),
    route({
      method: 'post',
      path: '/agents',
      access: { permission: 'agents.write' },
      summary: 'Create an agent',
      body: agentCreateSchema,
      handler: async (_req, res, { operation, body }) => {
        res.status(201);
        return agents.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id',
      access: { permission: 'agents.read' },
      summary: 'One agent, with its read-only judge_prompt_version',
      handler: async (req) => agents.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/agents/:agent_id',
      access: { permission: 'agents.write' },
      summary: 'Update an agent',
      body: agentUpdateSchema,
      handler: async (req, _res, { operation, body }) => agents.update(id(req.params), body, operation),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id',
      access: { permission: 'agents.delete' },
      summary: 'Delete an agent and its versions',
      handler: async (req, _res, { operation }) => {
        await agents.delete(id(req.params), operation);
        return { status: 'deleted' };
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/cost-overview',
      access: { permission: 'agents.read' },
      summary: 'Usage rollups, estimated costs (USD, internal) and request counts of the agent',
      handler: async (req) => app.costOverview!(id(req.params)),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/versions',
      access: { permission: 'agents.read' },
      summary: 'Version history, newest first',
      handler: async (req) => agents.listVersions(id(req.params)),
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/versions',
      access: { permission: 'agents.write' },
      summary: 'Store the live configuration as an immutable snapshot',
      body: snapshotBody,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return agents.snapshot(id(req.params), body.note ?? null, operation);
      },
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/versions/:version_id/rollback',
      access: { permission: 'agents.write' },
      summary: 'Snapshot the current configuration, then restore this version',
      handler: async (req, _res, { operation }) => agents.rollback(id(req.params), String(req.params.version_id), operation),
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/publish',
      access: { permission: 'agents.write' },
      summary: 'Freeze the live configuration as the published version',
      handler: async (req, _res, { operation }) => agents.publish(id(req.params), operation),
    }),
    route({
      method: 'get',
      path: '/public/agents',
      access: { public: true },
      summary: 'Active agents open to anonymous callers, without prompts or governance fields',
      handler: async () => agents.listPublic(),
    }),
  ];
};
