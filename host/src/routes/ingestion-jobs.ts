import { ingestSchema, rebuildSchema } from '@agent-host/core';
import { z } from 'zod';
import { ingestionJob } from '../schemas/knowledge.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const listQuery = z.object(pagingFields).strict();
const sourceNotFound = 'No such knowledge source (KNOWLEDGE_SOURCE_NOT_FOUND)';
const jobActive = 'An ingestion job of this source is still queued or running (INGESTION_JOB_ACTIVE)';

/** Ingestion and its jobs (spec 4.8). */
export const ingestionJobRoutes: RouteFactory<'knowledge'> = (domains) => {
  const sourceId = (params: Record<string, string>) => String(params.source_id);
  return [
    route({
      method: 'post',
      path: '/knowledge-sources/:source_id/ingest',
      access: { permission: 'knowledge.write' },
      summary: 'Start an ingestion job over the documents not indexed yet (or document_ids, or all with force)',
      success: { status: 202, description: 'Accepted: the ingestion job is queued', schema: ingestionJob },
      refusals: { 404: sourceNotFound, 409: `${jobActive}; or a managed_correction source (MANAGED_SOURCE_READ_ONLY)` },
      body: ingestSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(202);
        return domains.knowledge.ingestion.ingest(sourceId(req.params), body, operation);
      },
    }),
    route({
      method: 'post',
      path: '/knowledge-sources/:source_id/documents/:document_id/rebuild-from-snapshot',
      access: { permission: 'knowledge.write' },
      summary: 'Rebuild chunks and vectors from the parse snapshot, optionally with another chunking_strategy and chunking_params',
      success: { status: 202, description: 'Accepted: the rebuild job is queued', schema: ingestionJob },
      refusals: {
        404: `${sourceNotFound}, or no such document in it (DOCUMENT_NOT_FOUND)`,
        409: `${jobActive}; or the document has no parse snapshot yet (DOCUMENT_NOT_PARSED)`,
      },
      body: rebuildSchema,
      handler: async (req, res, { operation, body }) => {
        res.status(202);
        return domains.knowledge.ingestion.rebuild(sourceId(req.params), String(req.params.document_id), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/knowledge-sources/:source_id/ingestion-jobs',
      access: { permission: 'knowledge.read' },
      summary: 'Ingestion jobs of a source, newest first',
      query: listQuery,
      success: { status: 200, description: 'A page of jobs', schema: pageOf(ingestionJob) },
      refusals: { 404: sourceNotFound },
      handler: async (req, _res, { query }) => domains.knowledge.ingestion.list(sourceId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/ingestion-jobs/:job_id',
      access: { permission: 'knowledge.read' },
      summary: 'Ingestion job status with progress (documents done / total)',
      success: { status: 200, description: 'The job', schema: ingestionJob },
      refusals: { 404: 'No such job (INGESTION_JOB_NOT_FOUND)' },
      handler: async (req) => domains.knowledge.ingestion.get(String(req.params.job_id)),
    }),
  ];
};
