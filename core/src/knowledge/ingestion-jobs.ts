import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError, type JobScheduler } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import { z } from 'zod';
import { parseChunking, type Chunking } from './chunking.js';
import type { IndexMode } from './document-indexer.js';
import type { DocumentRepository } from './document-store.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { IngestionJobStore, type IngestionJobRow, type JobKind } from './ingestion-job-store.js';
import type { KnowledgeSources } from './sources.js';

export const INGEST_JOB = 'ingest';

export const ingestSchema = z
  .object({
    /** Only these documents; default: every document not indexed yet (or every document with `force`). */
    document_ids: z.array(z.string().uuid()).max(10_000).optional(),
    force: z.boolean().optional(),
  })
  .strict();
export const rebuildSchema = z
  .object({ chunking_strategy: z.string().min(1).max(64).optional(), chunking_params: z.record(z.string(), z.unknown()).optional() })
  .strict();
export type IngestInput = z.output<typeof ingestSchema>;
export type RebuildInput = z.output<typeof rebuildSchema>;

/** Ingestion jobs: what `POST .../ingest` and `.../rebuild-from-snapshot` queue, and their status (spec 4.8). */
export class IngestionJobs {
  private readonly store: IngestionJobStore;

  constructor(
    /** For the audit rows each job commits with. */
    private readonly db: Sequelize,
    private readonly sources: KnowledgeSources,
    private readonly documents: DocumentRepository,
    private readonly jobs: () => JobScheduler,
  ) {
    this.store = new IngestionJobStore(db);
  }

  async ingest(sourceId: string, input: IngestInput, op: Operation) {
    await this.sources.requireStandard(sourceId, 'ingested through the ingest endpoint');
    let ids: string[];
    if (input.document_ids) {
      const known = new Set(await this.store.documentsOf(sourceId, input.document_ids));
      const issues = input.document_ids.flatMap((id, i) =>
        known.has(id) ? [] : [{ loc: ['body', 'document_ids', i], msg: `document ${id} is not in source ${sourceId}`, type: 'value_error' }],
      );
      if (issues.length) throw new ValidationError(issues);
      ids = [...known];
    } else {
      ids = await this.store.documentsToIngest(sourceId, input.force ?? false);
    }
    return this.queue(sourceId, 'ingest', ids, null, op);
  }

  /** Rebuilds one document's chunks and points from its parse snapshot, optionally with another chunking. */
  async rebuild(sourceId: string, documentId: string, input: RebuildInput, op: Operation) {
    await this.sources.find(sourceId);
    await this.documents.require(sourceId, documentId);
    if (!(await this.documents.hasSnapshot(documentId)))
      throw new ConflictError(`document ${documentId} has no parse snapshot yet; run ingestion first`, { code: 'DOCUMENT_NOT_PARSED' });
    if (input.chunking_params !== undefined && input.chunking_strategy === undefined) {
      throw new ValidationError([{ loc: ['body', 'chunking_strategy'], msg: 'chunking_params needs chunking_strategy', type: 'missing' }]);
    }
    const chunking = input.chunking_strategy
      ? parseChunking(input.chunking_strategy, input.chunking_params, { strategy: ['body', 'chunking_strategy'], params: ['body', 'chunking_params'] })
      : null;
    return this.queue(sourceId, 'rebuild_from_snapshot', [documentId], chunking, op);
  }

  async list(sourceId: string, options: { limit: number; cursor?: string }) {
    await this.sources.find(sourceId);
    return this.store.page(sourceId, options, presentJob);
  }

  async get(jobId: string) {
    return presentJob(await this.find(jobId));
  }

  async find(jobId: string): Promise<IngestionJobRow> {
    const row = await this.store.find(jobId);
    if (!row) throw new NotFoundError(`ingestion job ${jobId} not found`, { code: 'INGESTION_JOB_NOT_FOUND' });
    return row;
  }

  /**
   * Records the job and queues its Agenda run. One ingest or rebuild at a
   * time per source: a second while one is queued or running is a 409.
   */
  private async queue(sourceId: string, kind: IndexMode, documentIds: string[], chunking: Chunking | null, op: Operation) {
    const id = await this.store.transaction(async (transaction) => {
      const active = await this.store.lockActive(sourceId, transaction);
      if (active)
        throw new ConflictError(`ingestion job ${active} of this source is still queued or running; wait for it to finish`, {
          code: 'INGESTION_JOB_ACTIVE',
        });
      return this.insert({ sourceId, kind, documentIds, chunking }, op, transaction);
    });
    await this.dispatch(id);
    return this.get(id);
  }

  /**
   * Writes a queued job and its audit row in the caller's transaction; the
   * caller dispatches it with {@link dispatch} once that commits.
   * Correction publishes each bring their own candidate document, so they
   * do not wait for the source's other jobs.
   */
  async insert(
    job: { sourceId: string; kind: JobKind; documentIds: string[]; chunking: Chunking | null },
    op: Operation,
    transaction: Transaction,
  ): Promise<string> {
    const id = randomUUID();
    await this.store.insert(id, job, op.operator.admin_user_id, transaction);
    await auditOperation(
      this.db,
      'core.knowledge',
      op,
      {
        action: `ingestion_job.${job.kind}`,
        target_type: 'ingestion_job',
        target_id: id,
        payload: { source_id: job.sourceId, documents_total: job.documentIds.length },
      },
      transaction,
    );
    return id;
  }

  /** Queues the Agenda run of a recorded job; a failure to queue fails the job rather than leaving it queued forever. */
  async dispatch(jobId: string): Promise<void> {
    try {
      await this.jobs().now(INGEST_JOB, { job_id: jobId });
    } catch (error) {
      await this.store.failUnqueued(jobId, `could not queue the job: ${(error as Error).message}`);
      throw error;
    }
  }
}

export function presentJob(row: IngestionJobRow) {
  return {
    job_id: row.id,
    source_id: row.source_id,
    job_kind: row.job_kind,
    status: row.status,
    documents_total: row.documents_total,
    documents_done: row.documents_done,
    documents_failed: row.documents_failed,
    progress: row.documents_total ? row.documents_done / row.documents_total : row.status === 'succeeded' ? 1 : 0,
    document_ids: row.document_ids,
    document_results: row.document_results,
    chunking_strategy: row.chunking_strategy,
    chunking_params: row.chunking_params,
    error_message: row.error_message,
    attempt_count: row.attempt_count,
    worker_heartbeat_at: row.worker_heartbeat_at?.toISOString() ?? null,
    lease_expires_at: row.lease_expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
