import { agentCreateSchema, agentUpdateSchema, agentViewSchema } from '@agent-host/core';
import { z } from 'zod';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();
const agentPage = pageOf(agentViewSchema);
const agentNotFound = { 404: 'No such agent (AGENT_NOT_FOUND)' };
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
      query: listQuery,
      success: { status: 200, description: 'A page of agents', schema: agentPage },
      handler: async (_req, _res, { query }) => agents.list(query),
    }),
    route({
      method: 'post',
      path: '/agents',
      access: { permission: 'agents.write' },
      summary: 'Create an agent',
      body: agentCreateSchema,
      success: { status: 201, description: 'The new agent', schema: agentViewSchema },
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
      success: { status: 200, description: 'The agent', schema: agentViewSchema },
      refusals: agentNotFound,
      handler: async (req) => agents.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/agents/:agent_id',
      access: { permission: 'agents.write' },
      summary: 'Update an agent',
      body: agentUpdateSchema,
      success: { status: 200, description: 'The agent as changed', schema: agentViewSchema },
      refusals: { ...agentNotFound, 409: 'The agent type cannot change while its configuration depends on it (AGENT_TYPE_CHANGE_REFUSED)' },
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
      success: { status: 201, description: 'The new version snapshot' },
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
