import type { JobRun, JobScheduler, Logger } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { parseChunking, type Chunking } from './chunking.js';
import type { DocumentIndexer, DocumentResult } from './document-indexer.js';
import { INGEST_JOB, type IngestionJobRow } from './ingestion-jobs.js';
import type { KnowledgeSources } from './sources.js';

export const SUPERVISOR_JOB = 'ingestion-supervisor';
/** Claims of one job before the supervisor gives up on it. */
const MAX_ATTEMPTS = 3;
const SUPERVISOR_LOCK_MS = 10_000;

export interface IngestionWorkerOptions {
  instanceId: string;
  leaseSeconds: number;
  supervisorIntervalSeconds: number;
  /**
   * Settles what waits on finished jobs (correction publishes). Called after
   * each job ends and on every supervisor sweep, so a worker that dies
   * between the two leaves nothing waiting; it must be idempotent.
   */
  settle(): Promise<void>;
}

/**
 * Runs ingestion jobs on Agenda. A worker claims a job by taking its lease
 * (`lease_owner`, `lease_expires_at`, `attempt_count`) and renews it with a
 * heartbeat; a worker that dies stops renewing, and the supervisor (or
 * Agenda's own lock expiry) hands the job to another worker, which goes on
 * with the documents not done yet. Documents are indexed idempotently, so
 * one interrupted half-way is simply indexed again.
 */
export class IngestionWorker {
  constructor(
    private readonly db: Sequelize,
    private readonly sources: KnowledgeSources,
    private readonly indexer: DocumentIndexer,
    private readonly options: IngestionWorkerOptions,
    private readonly logger: Logger,
  ) {}

  async define(jobs: JobScheduler): Promise<void> {
    const lockLifetimeMs = this.options.leaseSeconds * 1000;
    jobs.define<{ job_id: string }>(INGEST_JOB, (job) => this.run(job), { lockLifetimeMs, concurrency: 2 });
    // The sweep is one UPDATE. Agenda keeps a timer of half the lock lifetime after each run, which holds a
    // stopping process open that long, so the sweep gets a short lock rather than the ingestion lease.
    jobs.define(SUPERVISOR_JOB, () => this.supervise(jobs), { lockLifetimeMs: SUPERVISOR_LOCK_MS, concurrency: 1 });
    await jobs.every(`${this.options.supervisorIntervalSeconds} seconds`, SUPERVISOR_JOB, {});
  }

  async run(job: JobRun<{ job_id: string }>): Promise<void> {
    const claimed = await this.claim(job.data.job_id);
    if (!claimed) return;
    const log = this.logger.child({ ingestion_job_id: claimed.id, attempt: claimed.attempt_count });
    let lost = false;
    const beat = async () => {
      lost ||= !(await this.renew(claimed.id));
      await job.touch().catch(() => undefined);
    };
    const timer = setInterval(
      () => void beat().catch((error: unknown) => log.warn({ err: error }, 'heartbeat failed')),
      (this.options.leaseSeconds * 1000) / 3,
    );
    try {
      const source = await this.sources.find(claimed.source_id);
      const sourceChunking = parseChunking(source.chunking_strategy, source.chunking_params, { strategy: ['chunking_strategy'], params: ['chunking_params'] });
      const override: Chunking | null = claimed.chunking_strategy
        ? { strategy: claimed.chunking_strategy as Chunking['strategy'], params: claimed.chunking_params ?? {} }
        : null;
      const done = new Set(claimed.document_results.map((r) => r.document_id));
      for (const documentId of claimed.document_ids) {
        if (done.has(documentId)) continue;
        const result = await this.indexer.run(documentId, claimed.job_kind === 'ingest' ? 'ingest' : 'rebuild_from_snapshot', override, sourceChunking);
        if (lost || !(await this.record(claimed.id, result))) {
          log.warn('lease lost to another worker; stopping');
          return;
        }
      }
      await this.finish(claimed.id, null);
      log.info('ingestion job finished');
    } catch (error) {
      log.error({ err: error }, 'ingestion job failed');
      await this.finish(claimed.id, (error as Error).message);
    } finally {
      clearInterval(timer);
    }
    await this.options.settle();
  }

  /**
   * Takes the job if it is waiting, or if its holder's lease has lapsed.
   * Resolves with the claimed row, or undefined when another worker holds it
   * or it has ended.
   */
  private async claim(jobId: string): Promise<IngestionJobRow | undefined> {
    const [row] = await this.db.query<IngestionJobRow>(
      `UPDATE ingestion_jobs SET status = 'running', lease_owner = $2, lease_expires_at = now() + make_interval(secs => $3), worker_heartbeat_at = now(),
         attempt_count = attempt_count + 1, started_at = COALESCE(started_at, now()), updated_at = now()
       WHERE id = try_uuid($1) AND (status IN ('queued', 'recovering') OR (status = 'running' AND lease_expires_at < now()))
       RETURNING *`,
      { bind: [jobId, this.options.instanceId, this.options.leaseSeconds], type: QueryTypes.SELECT },
    );
    return row;
  }

  private async renew(jobId: string): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE ingestion_jobs SET lease_expires_at = now() + make_interval(secs => $3), worker_heartbeat_at = now(), updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status = 'running' RETURNING id`,
      { bind: [jobId, this.options.instanceId, this.options.leaseSeconds], type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Adds a document's result and renews the lease; false when this worker no longer holds the job. */
  private async record(jobId: string, result: DocumentResult): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE ingestion_jobs SET document_results = document_results || $3::jsonb, documents_done = documents_done + 1,
         documents_failed = documents_failed + $4, lease_expires_at = now() + make_interval(secs => $5), worker_heartbeat_at = now(), updated_at = now()
       WHERE id = $1 AND lease_owner = $2 AND status = 'running' RETURNING id`,
      {
        bind: [jobId, this.options.instanceId, JSON.stringify([result]), result.status === 'failed' ? 1 : 0, this.options.leaseSeconds],
        type: QueryTypes.SELECT,
      },
    );
    return rows.length > 0;
  }

  /** Ends the job: `failed` on an error or when every document failed, `partially_failed` when some did. */
  private async finish(jobId: string, error: string | null): Promise<void> {
    await this.db.query(
      `UPDATE ingestion_jobs SET status = CASE
           WHEN $3::text IS NOT NULL OR (documents_total > 0 AND documents_failed = documents_total) THEN 'failed'
           WHEN documents_failed > 0 THEN 'partially_failed' ELSE 'succeeded' END,
         error_message = $3, lease_owner = NULL, lease_expires_at = NULL, completed_at = now(), updated_at = now()
       WHERE id = $1 AND lease_owner = $2`,
      { bind: [jobId, this.options.instanceId, error] },
    );
    if (error) await this.releaseDocuments(jobId, error);
  }

  /**
   * Finds running jobs whose lease lapsed (their worker died or hung): each
   * becomes `recovering` and is queued again, or, after MAX_ATTEMPTS claims,
   * `failed` with its unfinished documents marked failed.
   */
  async supervise(jobs: JobScheduler): Promise<void> {
    const expired = await this.db.query<{ id: string; attempt_count: number }>(
      `UPDATE ingestion_jobs SET status = CASE WHEN attempt_count >= $1 THEN 'failed' ELSE 'recovering' END, lease_owner = NULL,
         error_message = CASE WHEN attempt_count >= $1 THEN 'the job was interrupted ' || attempt_count || ' times; giving up' ELSE error_message END,
         completed_at = CASE WHEN attempt_count >= $1 THEN now() ELSE NULL END, updated_at = now()
       WHERE status = 'running' AND lease_expires_at < now() RETURNING id, attempt_count`,
      { bind: [MAX_ATTEMPTS], type: QueryTypes.SELECT },
    );
    for (const job of expired) {
      if (job.attempt_count >= MAX_ATTEMPTS) {
        await this.releaseDocuments(job.id, 'ingestion was interrupted too often');
        this.logger.warn({ ingestion_job_id: job.id }, 'ingestion job failed after repeated interruptions');
      } else {
        this.logger.warn({ ingestion_job_id: job.id }, 'ingestion job lease expired; queued again');
        await jobs.now(INGEST_JOB, { job_id: job.id });
      }
    }
    await this.options.settle();
  }

  /** A job that ends early leaves none of its documents waiting (spec 2.6). */
  private async releaseDocuments(jobId: string, reason: string): Promise<void> {
    await this.db.query(
      `UPDATE knowledge_documents d SET status = 'failed', vector_status = 'reindex_required', error_message = $2, updated_at = now()
       FROM ingestion_jobs j WHERE j.id = $1 AND d.status = 'processing' AND j.document_ids @> to_jsonb(d.id::text)`,
      { bind: [jobId, reason] },
    );
  }
}
