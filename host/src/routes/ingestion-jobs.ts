import { ingestSchema, rebuildSchema } from '@agent-host/core';
import { z } from 'zod';
import { pagingFields, parseQuery } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();

/** Ingestion and its jobs (spec 4.8). */
export const ingestionJobRoutes: RouteFactory = (app) => {
  const knowledge = app.knowledge!;
  const sourceId = (params: Record<string, string>) => String(params.source_id);
  return [
    route({
      method: 'post',
      path: '/knowledge-sources/:source_id/ingest',
      access: { permission: 'knowledge.write' },
      summary: 'Start an ingestion job over the documents not indexed yet (or document_ids, or all with force)',
      success: { status: 202, description: 'Accepted: the ingestion job is queued' },
      body: ingestSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(202);
        return knowledge.ingestion.ingest(sourceId(req.params), body, operation);
      },
    }),
    route({
      method: 'post',
      path: '/knowledge-sources/:source_id/documents/:document_id/rebuild-from-snapshot',
      access: { permission: 'knowledge.write' },
      summary: 'Rebuild chunks and vectors from the parse snapshot, optionally with another chunking_strategy and chunking_params',
      success: { status: 202, description: 'Accepted: the rebuild job is queued' },
      body: rebuildSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(202);
        return knowledge.ingestion.rebuild(sourceId(req.params), String(req.params.document_id), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/ingestion-jobs',
      access: { permission: 'knowledge.read' },
      summary: 'Ingestion jobs of a source, newest first',
      handler: async (req) => knowledge.ingestion.list(sourceId(req.params), parseQuery(listQuery, req.query)),
    }),
    route({
      method: 'get',
      path: '/ingestion-jobs/:job_id',
      access: { permission: 'knowledge.read' },
      summary: 'Ingestion job status with progress (documents done / total)',
      handler: async (req) => knowledge.ingestion.get(String(req.params.job_id)),
    }),
  ];
};
