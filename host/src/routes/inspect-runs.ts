import { inspectSchema } from '@agent-host/core';
import { z } from 'zod';
import { inspectRun, inspectRunWithResults } from '../schemas/knowledge.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();
const sourceNotFound = 'No such knowledge source (KNOWLEDGE_SOURCE_NOT_FOUND)';

/** Inspect runs of a knowledge source (spec 4.8 rule 3). */
export const inspectRunRoutes: RouteFactory<'knowledge'> = (domains) => {
  const sourceId = (params: Record<string, string>) => String(params.source_id);
  return [
    route({
      method: 'post',
      path: '/knowledge-sources/:source_id/inspect-runs',
      access: { permission: 'knowledge.write' },
      summary: 'Run an inspection (vector_health or chunking_preview) and return its summary and results',
      success: { status: 201, description: 'The completed inspect run', schema: inspectRunWithResults },
      refusals: { 404: sourceNotFound },
      body: inspectSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(201);
        return domains.knowledge.inspectRuns.create(sourceId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/inspect-runs',
      access: { permission: 'knowledge.read' },
      summary: 'Inspect run history, newest first',
      query: listQuery,
      success: { status: 200, description: 'A page of inspect runs, without their results', schema: pageOf(inspectRun) },
      refusals: { 404: sourceNotFound },
      handler: async (req, _res, { query }) => domains.knowledge.inspectRuns.list(sourceId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/inspect-runs/:run_id',
      access: { permission: 'knowledge.read' },
      summary: 'An inspect run: summary and document-level results',
      success: { status: 200, description: 'The run with its results', schema: inspectRunWithResults },
      refusals: { 404: 'No such inspect run in this source (INSPECT_RUN_NOT_FOUND)' },
      handler: async (req) => domains.knowledge.inspectRuns.get(sourceId(req.params), String(req.params.run_id)),
    }),
  ];
};
