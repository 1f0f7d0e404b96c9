import { z } from 'zod';
import { timestamp } from '../validation.js';

/** Documents and ingestion jobs as responses show them (spec 2.6, 4.8), from core/src/knowledge. */

const chunkingParams = z.record(z.string(), z.number()).nullable();

export const knowledgeDocument = z
  .object({
    document_id: z.string().uuid(),
    source_id: z.string().uuid(),
    filename: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int(),
    sha256: z.string(),
    status: z.enum(['uploaded', 'processing', 'indexed', 'failed']),
    processing_status: z.enum(['uploaded', 'processing', 'indexed', 'failed']).describe('The same as status'),
    vector_status: z.enum(['pending_verification', 'indexed', 'reindex_required', 'verification_failed']),
    expected_point_count: z.number().int().nullable(),
    actual_point_count: z.number().int().nullable(),
    vector_verified_at: timestamp.nullable(),
    chunking_strategy: z.string().nullable(),
    chunking_params: chunkingParams,
    error_message: z.string().nullable(),
    metadata_json: z.record(z.string(), z.unknown()),
    download_url: z.string().nullable().describe("A presigned URL, or this document's own download route"),
    download_mode: z.enum(['presigned_url', 'object_store_proxy']),
    download_warning: z.string().nullable(),
    indexed_at: timestamp.nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'KnowledgeDocument' });

export const ingestionJob = z
  .object({
    job_id: z.string().uuid(),
    source_id: z.string().uuid(),
    job_kind: z.enum(['ingest', 'rebuild_from_snapshot', 'publish_correction']),
    status: z.enum(['queued', 'running', 'recovering', 'succeeded', 'partially_failed', 'failed']),
    documents_total: z.number().int(),
    documents_done: z.number().int(),
    documents_failed: z.number().int(),
    progress: z.number().min(0).max(1).describe('documents_done / documents_total'),
    document_ids: z.array(z.string().uuid()),
    document_results: z.array(
      z.object({
        document_id: z.string().uuid(),
        filename: z.string().nullable(),
        status: z.enum(['indexed', 'failed', 'skipped']),
        point_count: z.number().int().optional(),
        error: z.string().optional(),
      }),
    ),
    chunking_strategy: z.string().nullable(),
    chunking_params: chunkingParams,
    error_message: z.string().nullable(),
    attempt_count: z.number().int(),
    worker_heartbeat_at: timestamp.nullable(),
    lease_expires_at: timestamp.nullable(),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
  })
  .meta({ id: 'IngestionJob' });

const inspectResult = z.object({
  document_id: z.string().uuid().nullable().describe('Null once the document is deleted; the result keeps its filename'),
  document_filename: z.string(),
  outcome: z.string().describe('vector_health: healthy, missing_points, not_indexed, error, ...; chunking_preview: previewed, no_snapshot'),
  details: z.record(z.string(), z.unknown()),
  recommendations: z.array(
    z.object({
      action: z.enum(['run_ingestion', 'rebuild_from_snapshot']),
      reason: z.string(),
      chunking_strategy: z.string().optional(),
      chunking_params: z.record(z.string(), z.number()).optional(),
    }),
  ),
});

/** An inspect run (spec 4.8 rule 3); the list leaves out `results`. */
export const inspectRun = z
  .object({
    run_id: z.string().uuid(),
    source_id: z.string().uuid(),
    inspection_mode: z.enum(['vector_health', 'chunking_preview']),
    candidate_chunking_strategy: z.string().nullable(),
    candidate_chunking_params: chunkingParams,
    document_ids: z.array(z.string().uuid()).describe('The documents asked for; empty for the whole source'),
    status: z.string(),
    summary: z.record(z.string(), z.number()).describe('documents_inspected and a count per outcome'),
    error_message: z.string().nullable(),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({ id: 'InspectRun' });
export const inspectRunWithResults = inspectRun.extend({ results: z.array(inspectResult) }).meta({ id: 'InspectRunWithResults' });

export const embeddingReadiness = z.object({
  ready: z.boolean(),
  backend_type: z.string().describe('The embedder plugin key'),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  dim: z.number().int().nullable(),
  error: z
    .object({
      code: z.enum(['embedder_not_registered', 'dimension_mismatch', 'embedding_failed']),
      message: z.string(),
      status: z.number().int().optional().describe("The embedding service's HTTP status, when it answered one"),
    })
    .nullable(),
  latency_ms: z.number().int(),
  checked_at: timestamp,
});

/** One chunk retrieval hands on, with its source fields (spec 2.2). */
const ragChunk = z.object({
  chunk_id: z.string(),
  content: z.string(),
  score: z.number(),
  retrieval_mode: z.enum(['vector', 'keyword_fallback']),
  matched_words: z.array(z.string()).nullable(),
  source_id: z.string().uuid(),
  source_name: z.string(),
  source_kind: z.string(),
  source_priority: z.number().int(),
  document_id: z.string().uuid(),
  document_filename: z.string(),
  document_origin: z.string(),
  chunk_index: z.number().int(),
  metadata: z.record(z.string(), z.unknown()),
});

export const ragDebugReport = z.object({
  session_id: z.string(),
  turn_id: z.string().uuid(),
  agent_id: z.string().uuid().nullable(),
  query: z.string(),
  top_k: z.number().int(),
  threshold: z.number(),
  mounted_sources: z.array(z.object({ source_id: z.string().uuid(), name: z.string(), source_kind: z.string(), priority: z.number().int() })),
  vector_candidates: z.array(
    z.object({
      chunk_id: z.string(),
      score: z.number(),
      source_id: z.string().uuid(),
      document_id: z.string().nullable(),
      document_filename: z.string().nullable(),
      chunk_index: z.number().int().nullable(),
      content_preview: z.string(),
      kept: z.boolean(),
      excluded_reason: z.enum(['below_threshold', 'document_not_indexed', 'correction_not_published', 'beyond_top_k']).nullable(),
    }),
  ),
  vector_error: z.string().nullable(),
  final_chunks: z.array(ragChunk),
  keyword_fallback: z.object({
    used: z.boolean(),
    mode: z.literal('keyword_fallback').nullable(),
    reason: z.string().nullable(),
    query_words: z.array(z.string()),
    matched_words: z.array(z.string()),
    hit_count: z.number().int(),
  }),
  conclusion: z.object({ code: z.enum(['no_agent', 'no_mounted_sources', 'vector_hits', 'keyword_fallback_hits', 'no_hits']), message: z.string() }),
});
