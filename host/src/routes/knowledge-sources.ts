import { sourceCreateSchema, sourceUpdateSchema, sourceViewSchema } from '@agent-host/core';
import { z } from 'zod';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();

/** Knowledge sources (spec 4.8). */
export const knowledgeSourceRoutes: RouteFactory<'knowledge'> = (domains) => {
  return [
    route({
      method: 'post',
      path: '/knowledge-sources',
      access: { permission: 'knowledge.write' },
      summary: 'Create a knowledge source (source_kind standard) with its chunking strategy',
      success: { status: 201, description: 'The new knowledge source', schema: sourceViewSchema },
      body: sourceCreateSchema,
      example: {
        name: 'Shipping handbook',
        description: 'Rates, zones and delivery times',
        chunking_strategy: 'recursive_character',
        chunking_params: { chunk_size: 800, chunk_overlap: 100 },
      },
      handler: async (_req, res, { operation, body }) => {
        res.status(201);
        return domains.knowledge.sources.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources',
      access: { permission: 'knowledge.read' },
      summary: 'Knowledge sources, newest first ({items, next_cursor, limit})',
      query: listQuery,
      success: { status: 200, description: 'A page of knowledge sources', schema: pageOf(sourceViewSchema) },
      handler: async (_req, _res, { query }) => domains.knowledge.sources.list(query),
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id',
      access: { permission: 'knowledge.read' },
      summary: 'One knowledge source, with source_kind and managed_for_agent_id',
      success: { status: 200, description: 'The knowledge source', schema: sourceViewSchema },
      handler: async (req) => domains.knowledge.sources.get(String(req.params.source_id)),
    }),
    route({
      method: 'patch',
      path: '/knowledge-sources/:source_id',
      access: { permission: 'knowledge.write' },
      summary: 'Update a knowledge source (refused for managed_correction sources)',
      body: sourceUpdateSchema,
      success: { status: 200, description: 'The knowledge source as changed', schema: sourceViewSchema },
      refusals: { 409: 'A managed_correction source changes only through corrections (MANAGED_SOURCE_READ_ONLY)' },
      handler: async (req, _res, { operation, body }) => domains.knowledge.sources.update(String(req.params.source_id), body, operation),
    }),
  ];
};
