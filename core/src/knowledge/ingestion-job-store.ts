import { QueryTypes, type Transaction } from 'sequelize';
import type { LeasedRow } from '../db/leased-row.js';
import { SqlStore } from '../db/sql-store.js';
import { newestFirst } from '../db/keyset-cursor.js';
import type { Chunking } from './chunking.js';
import type { DocumentResult, IndexMode } from './document-indexer.js';

/** What a job does: index documents (parsing them), rebuild from their parse snapshots, or index a correction's candidate document (from the snapshot its publish wrote). */
export type JobKind = IndexMode | 'publish_correction';

/** `queued -> running -> succeeded | partially_failed | failed`; a running job whose lease lapsed is `recovering` until a worker claims it again. */
export type IngestionStatus = 'queued' | 'running' | 'recovering' | 'succeeded' | 'partially_failed' | 'failed';

export interface IngestionJobRow extends LeasedRow {
  id: string;
  source_id: string;
  job_kind: JobKind;
  status: IngestionStatus;
  document_ids: string[];
  documents_total: number;
  documents_done: number;
  documents_failed: number;
  document_results: DocumentResult[];
  chunking_strategy: string | null;
  chunking_params: Record<string, number> | null;
  error_message: string | null;
}

/**
 * The SQL of ingestion jobs: the `ingestion_jobs` table, written by the API when a job is queued and by the worker
 * that holds its lease, and the documents a job picks.
 */
export class IngestionJobStore extends SqlStore {
  page<T>(sourceId: string, page: { limit: number; cursor?: string }, present: (row: IngestionJobRow) => T) {
    return newestFirst(this.db, { from: 'ingestion_jobs', where: 'r.source_id = $1', bind: [sourceId] }, page, present);
  }

  /**
   * Readies the chunks for keyword search after a large load: merges the GIN index's pending list (new entries wait in
   * it, and every search reads it whole, until autovacuum merges them) and refreshes the planner's statistics of the
   * chunks (the common words of the keyword fallback among them) and of their documents (a search planned on a table of
   * documents it believes empty ran its index scan once per document: 50 ms, not 1, at 100k chunks in 50 documents).
   */
  async settleChunkSearch(): Promise<void> {
    await this.db.query("SELECT gin_clean_pending_list('knowledge_chunks_search'::regclass)");
    await this.db.query('ANALYZE knowledge_documents, knowledge_chunks');
  }

  async find(jobId: string): Promise<IngestionJobRow | undefined> {
    const [row] = await this.db.query<IngestionJobRow>('SELECT * FROM ingestion_jobs WHERE id = try_uuid($1)', { bind: [jobId], type: QueryTypes.SELECT });
    return row;
  }

  /** Which of `ids` are documents of the source. */
  async documentsOf(sourceId: string, ids: string[]): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>('SELECT id FROM knowledge_documents WHERE source_id = $1 AND id = ANY($2::uuid[])', {
      bind: [sourceId, ids],
      type: QueryTypes.SELECT,
    });
    return rows.map((r) => r.id);
  }

  /** The source's documents not indexed yet (every document with `all`), oldest first. */
  async documentsToIngest(sourceId: string, all: boolean): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM knowledge_documents WHERE source_id = $1 AND ($2 OR status <> 'indexed' OR vector_status <> 'indexed') ORDER BY created_at, id`,
      { bind: [sourceId, all], type: QueryTypes.SELECT },
    );
    return rows.map((r) => r.id);
  }

  /**
   * The source's ingest or rebuild job still queued or running, after locking the source for the transaction, so two
   * requests cannot both find none.
   */
  async lockActive(sourceId: string, transaction: Transaction): Promise<string | undefined> {
    await this.db.query('SELECT id FROM knowledge_sources WHERE id = $1 FOR UPDATE', { bind: [sourceId], transaction });
    const [row] = await this.db.query<{ id: string }>(
      `SELECT id FROM ingestion_jobs WHERE source_id = $1 AND job_kind <> 'publish_correction' AND status IN ('queued', 'running', 'recovering') LIMIT 1`,
      { bind: [sourceId], type: QueryTypes.SELECT, transaction },
    );
    return row?.id;
  }

  async insert(
    id: string,
    job: { sourceId: string; kind: JobKind; documentIds: string[]; chunking: Chunking | null },
    createdBy: string | null,
    transaction: Transaction,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO ingestion_jobs (id, source_id, job_kind, status, document_ids, documents_total, chunking_strategy, chunking_params, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $8, now(), now())`,
      {
        bind: [
          id,
          job.sourceId,
          job.kind,
          JSON.stringify(job.documentIds),
          job.documentIds.length,
          job.chunking?.strategy ?? null,
          job.chunking ? JSON.stringify(job.chunking.params) : null,
          createdBy,
        ],
        transaction,
      },
    );
  }

  async failUnqueued(jobId: string, message: string): Promise<void> {
    await this.db.query("UPDATE ingestion_jobs SET status = 'failed', error_message = $2, completed_at = now(), updated_at = now() WHERE id = $1", {
      bind: [jobId, message],
    });
  }

  /** Takes the job's lease for `owner` if it is free (queued, recovering, or running with a lapsed lease). */
  async claim(jobId: string, owner: string, leaseSeconds: number): Promise<IngestionJobRow | undefined> {
    const [row] = await this.db.query<IngestionJobRow>(
      `UPDATE ingestion_jobs SET status = 'running', lease_owner = $2, lease_expires_at = now() + make_interval(secs => $3), worker_heartbeat_at = now(),
         attempt_count = attempt_count + 1, started_at = COALESCE(started_at, now()), updated_at = now()
       WHERE id = try_uuid($1) AND (status IN ('queued', 'recovering') OR (status = 'running' AND lease_expires_at < now()))
       RETURNING *`,
      { bind: [jobId, owner, leaseSeconds], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** Renews the lease; false when `owner` no longer holds the job. */
  async renew(jobId: string, owner: string, leaseSeconds: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE ingestion_jobs SET lease_expires_at = now() + make_interval(secs => $3), worker_heartbeat_at = now(), updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status = 'running' RETURNING id`,
      { bind: [jobId, owner, leaseSeconds], type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Adds a document's result and renews the lease; false when `owner` no longer holds the job. */
  async record(jobId: string, owner: string, result: DocumentResult, leaseSeconds: number): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE ingestion_jobs SET document_results = document_results || $3::jsonb, documents_done = documents_done + 1,
         documents_failed = documents_failed + $4, lease_expires_at = now() + make_interval(secs => $5), worker_heartbeat_at = now(), updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status = 'running' RETURNING id`,
      { bind: [jobId, owner, JSON.stringify([result]), result.status === 'failed' ? 1 : 0, leaseSeconds], type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Ends the job: `failed` on an error or when every document failed, `partially_failed` when some did. */
  async finish(jobId: string, owner: string, error: string | null): Promise<void> {
    await this.db.query(
      `UPDATE ingestion_jobs SET status = CASE
           WHEN $3::text IS NOT NULL OR (documents_total > 0 AND documents_failed = documents_total) THEN 'failed'
           WHEN documents_failed > 0 THEN 'partially_failed' ELSE 'succeeded' END,
         error_message = $3, lease_owner = NULL, lease_expires_at = NULL, completed_at = now(), updated_at = now()
       WHERE id = $1 AND lease_owner = $2`,
      { bind: [jobId, owner, error] },
    );
  }

  /** Running jobs whose lease lapsed: failed after `maxAttempts`, else `recovering`; resolves with them. */
  expireLeases(maxAttempts: number): Promise<{ id: string; attempt_count: number }[]> {
    return this.db.query<{ id: string; attempt_count: number }>(
      `UPDATE ingestion_jobs SET status = CASE WHEN attempt_count >= $1 THEN 'failed' ELSE 'recovering' END, lease_owner = NULL,
         error_message = CASE WHEN attempt_count >= $1 THEN 'the job was interrupted ' || attempt_count || ' times; giving up' ELSE error_message END,
         completed_at = CASE WHEN attempt_count >= $1 THEN now() ELSE NULL END, updated_at = now()
       WHERE status = 'running' AND lease_expires_at < now() RETURNING id, attempt_count`,
      { bind: [maxAttempts], type: QueryTypes.SELECT },
    );
  }

  /** Fails the job's documents still `processing`, with `reason`. */
  async releaseDocuments(jobId: string, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE knowledge_documents d SET status = 'failed', vector_status = 'reindex_required', error_message = $2, updated_at = now()
       FROM ingestion_jobs j WHERE j.id = $1 AND d.status = 'processing' AND j.document_ids @> to_jsonb(d.id::text)`,
      { bind: [jobId, reason] },
    );
  }
}
