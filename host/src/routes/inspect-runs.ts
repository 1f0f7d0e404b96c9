import { inspectSchema } from '@agent-host/core';
import { z } from 'zod';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();

/** Inspect runs of a knowledge source (spec 4.8 rule 3). */
export const inspectRunRoutes: RouteFactory = (app) => {
  const knowledge = app.knowledge!;
  const sourceId = (params: Record<string, string>) => String(params.source_id);
  return [
    route({
      method: 'post',
      path: '/knowledge-sources/:source_id/inspect-runs',
      access: { permission: 'knowledge.write' },
      summary: 'Run an inspection (vector_health or chunking_preview) and return its summary and results',
      success: { status: 201, description: 'The completed inspect run' },
      body: inspectSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return knowledge.inspectRuns.create(sourceId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/inspect-runs',
      access: { permission: 'knowledge.read' },
      summary: 'Inspect run history, newest first',
      handler: async (req) => knowledge.inspectRuns.list(sourceId(req.params), parseQuery(listQuery, req.query)),
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/inspect-runs/:run_id',
      access: { permission: 'knowledge.read' },
      summary: 'An inspect run: summary and document-level results',
      handler: async (req) => knowledge.inspectRuns.get(sourceId(req.params), String(req.params.run_id)),
    }),
  ];
};
