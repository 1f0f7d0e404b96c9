import { agentCreateSchema, agentUpdateSchema, agentViewSchema } from '@agent-host/core';
import { z } from 'zod';
import { estimatedCost, tokenUsageRollup } from '../schemas/usage.js';
import { listOf, pageOf, pagingFields, statusOf, timestamp } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();
const agentPage = pageOf(agentViewSchema);
const agentVersion = z
  .object({
    version_id: z.string().uuid(),
    version_number: z.number().int().min(1),
    reason: z.enum(['manual', 'rollback_backup', 'publish']),
    note: z.string().nullable(),
    snapshot: z.record(z.string(), z.unknown()).describe('The configuration fields as they were'),
    created_by: z.string().uuid().nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'AgentVersion' });
const costOverview = z.object({
  agent_id: z.string().uuid(),
  conversation_usage_rollup: tokenUsageRollup,
  evaluation_generation_usage_rollup: tokenUsageRollup,
  evaluation_judge_usage_rollup: tokenUsageRollup,
  conversation_estimated_cost: estimatedCost,
  evaluation_generation_estimated_cost: estimatedCost,
  evaluation_judge_estimated_cost: estimatedCost,
  combined_estimated_cost: estimatedCost,
  active_request_count: z.number().int(),
  total_request_count: z.number().int(),
  remaining_total_requests: z.number().int().nullable().describe('Null without max_total_requests'),
});
const usageByDay = z
  .object({
    agent_id: z.string().uuid(),
    days: z.array(
      z.object({
        date: z.string().describe('The UTC day, YYYY-MM-DD'),
        turns: z.number().int(),
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        total_tokens: z.number().int(),
        estimated_cost_usd: z.number().describe('Internal estimate, not an invoice'),
      }),
    ),
  })
  .meta({ id: 'AgentUsageByDay' });
const usageByDayQuery = z.object({ days: z.coerce.number().int().min(1).max(366).default(30) }).strict();
const publicAgent = z.object({ agent_id: z.string().uuid(), name: z.string(), description: z.string(), agent_type: z.string() });
const snapshotBody = z.object({ note: z.string().max(2000).nullable().optional() }).strict();

export const agentRoutes: RouteFactory<'agents' | 'costOverview' | 'usageByDay'> = (domains) => {
  const id = (params: Record<string, string>) => String(params.agent_id);
  return [
    route({
      method: 'get',
      path: '/agents',
      access: { permission: 'agents.read' },
      summary: 'List agents ({items, next_cursor, limit})',
      query: listQuery,
      success: { status: 200, description: 'A page of agents', schema: agentPage },
      handler: async (_req, _res, { query }) => domains.agents.list(query),
    }),
    route({
      method: 'post',
      path: '/agents',
      access: { permission: 'agents.write' },
      summary: 'Create an agent',
      body: agentCreateSchema,
      example: {
        name: 'Parcel desk',
        agent_type: 'chat',
        description: 'Answers questions about parcels',
        public_access_mode: 'public_anonymous',
        system_prompt: 'You help customers track parcels.',
      },
      success: { status: 201, description: 'The new agent', schema: agentViewSchema },
      handler: async (_req, res, { operation, body }) => {
        res.status(201);
        return domains.agents.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id',
      access: { permission: 'agents.read' },
      summary: 'One agent, with its read-only judge_prompt_version',
      success: { status: 200, description: 'The agent', schema: agentViewSchema },
      handler: async (req) => domains.agents.get(id(req.params)),
    }),
    route({
      method: 'patch',
      path: '/agents/:agent_id',
      access: { permission: 'agents.write' },
      summary: 'Update an agent',
      body: agentUpdateSchema,
      success: { status: 200, description: 'The agent as changed', schema: agentViewSchema },
      refusals: { 409: 'The agent type cannot change while its configuration depends on it (AGENT_TYPE_CHANGE_REFUSED)' },
      handler: async (req, _res, { operation, body }) => domains.agents.update(id(req.params), body, operation),
    }),
    route({
      method: 'del',
      path: '/agents/:agent_id',
      access: { permission: 'agents.delete' },
      summary: 'Delete an agent and its versions',
      success: { status: 200, description: 'Deleted', schema: statusOf('deleted') },
      handler: async (req, _res, { operation }) => {
        await domains.agents.delete(id(req.params), operation);
        return { status: 'deleted' };
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/cost-overview',
      access: { permission: 'agents.read' },
      summary: 'Usage rollups, estimated costs (USD, internal) and request counts of the agent',
      success: { status: 200, description: 'The overview', schema: costOverview },
      handler: async (req) => domains.costOverview(id(req.params)),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/usage-by-day',
      access: { permission: 'agents.read' },
      summary: "The agent's conversation turns, tokens and estimated cost (USD, internal) per UTC day, oldest first",
      query: usageByDayQuery,
      success: { status: 200, description: 'One entry a day of the last `days` (today included); days without a turn count zero', schema: usageByDay },
      handler: async (req, _res, { query }) => domains.usageByDay(id(req.params), query.days),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/versions',
      access: { permission: 'agents.read' },
      summary: 'Version history, newest first',
      success: { status: 200, description: 'The versions', schema: listOf(agentVersion) },
      handler: async (req) => domains.agents.listVersions(id(req.params)),
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/versions',
      access: { permission: 'agents.write' },
      summary: 'Store the live configuration as an immutable snapshot',
      success: { status: 201, description: 'The new version snapshot', schema: agentVersion },
      body: snapshotBody,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return domains.agents.snapshot(id(req.params), body.note ?? null, operation);
      },
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/versions/:version_id/rollback',
      access: { permission: 'agents.write' },
      summary: 'Snapshot the current configuration, then restore this version',
      success: { status: 200, description: 'The agent as restored', schema: agentViewSchema },
      refusals: {
        404: 'No such agent (AGENT_NOT_FOUND) or version of it (AGENT_VERSION_NOT_FOUND)',
        409: 'The restored agent_type conflicts with work that depends on the current one (AGENT_TYPE_CHANGE_REFUSED)',
        422: 'The snapshot no longer passes the checks of an update',
      },
      handler: async (req, _res, { operation }) => domains.agents.rollback(id(req.params), String(req.params.version_id), operation),
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/publish',
      access: { permission: 'agents.write' },
      summary: 'Freeze the live configuration as the published version',
      success: { status: 200, description: 'The agent with its published_agent_version_id', schema: agentViewSchema },
      refusals: { 409: 'Only Fusion agents with a fusion_definition run a published snapshot (AGENT_NOT_PUBLISHABLE)' },
      handler: async (req, _res, { operation }) => domains.agents.publish(id(req.params), operation),
    }),
    route({
      method: 'get',
      path: '/public/agents',
      access: { public: true },
      summary: 'Active agents open to anonymous callers, without prompts or governance fields',
      success: { status: 200, description: 'The public agents, by name', schema: listOf(publicAgent) },
      handler: async () => domains.agents.listPublic(),
    }),
  ];
};
