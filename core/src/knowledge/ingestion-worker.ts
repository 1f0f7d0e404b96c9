import type { JobRun, JobScheduler, Logger } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { SHORT_JOB_LOCK_MS } from '../jobs/short-lock.js';
import { parseChunking, type Chunking } from './chunking.js';
import type { DocumentIndexer, DocumentResult } from './document-indexer.js';
import { IngestionJobStore, type IngestionJobRow } from './ingestion-job-store.js';
import { INGEST_JOB } from './ingestion-jobs.js';
import type { KnowledgeSources } from './sources.js';

export const SUPERVISOR_JOB = 'ingestion-supervisor';
/** Claims of one job before the supervisor gives up on it. */
const MAX_ATTEMPTS = 3;
/** Documents of one job indexed at once (bench/ingest: 46.6 s for 10 MiB one at a time). */
const DOCUMENTS_AT_ONCE = 2;
/**
 * Chunks a job indexes after which it readies them for keyword search before it ends (the full-text index's pending
 * entries merged, the statistics of chunks and documents refreshed), as autovacuum would only up to a minute later, or
 * for a table of few documents never: until then a search reads the pending entries whole, the keyword fallback
 * (which tells common words by the statistics) ranks every chunk holding any word, and a search planned on documents
 * believed absent runs its index scan once per document (bench/retrieve at 100k chunks: keyword search p99 158 to
 * 231 ms before, 10 ms after).
 */
const SETTLE_SEARCH_AFTER_CHUNKS = 500;

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
  private readonly store: IngestionJobStore;

  constructor(
    db: Sequelize,
    private readonly sources: KnowledgeSources,
    private readonly indexer: DocumentIndexer,
    private readonly options: IngestionWorkerOptions,
    private readonly logger: Logger,
  ) {
    this.store = new IngestionJobStore(db);
  }

  async define(jobs: JobScheduler): Promise<void> {
    const lockLifetimeMs = this.options.leaseSeconds * 1000;
    jobs.define<{ job_id: string }>(INGEST_JOB, (job) => this.run(job), { lockLifetimeMs, concurrency: 2 });
    // The sweep is one UPDATE: a short lock, not the ingestion lease.
    jobs.define(SUPERVISOR_JOB, () => this.supervise(jobs), { lockLifetimeMs: SHORT_JOB_LOCK_MS, concurrency: 1 });
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
      const waiting = claimed.document_ids.filter((id) => !done.has(id));
      let indexedChunks = 0;
      let failure: { error: unknown } | undefined;
      const indexNext = async (): Promise<void> => {
        for (let documentId = waiting.shift(); documentId && !lost && !failure; documentId = waiting.shift()) {
          try {
            const result = await this.indexer.run(documentId, claimed.job_kind === 'ingest' ? 'ingest' : 'rebuild_from_snapshot', override, sourceChunking);
            if (lost || !(await this.record(claimed.id, result))) lost = true;
            indexedChunks += result.point_count ?? 0;
          } catch (error) {
            failure ??= { error };
          }
        }
      };
      // Documents side by side: one's vector store writes (over half of a document's time with the local Chroma)
      // overlap the next one's parse and embedding.
      await Promise.all(Array.from({ length: DOCUMENTS_AT_ONCE }, indexNext));
      if (failure) throw failure.error;
      if (lost) {
        log.warn('lease lost to another worker; stopping');
        return;
      }
      if (indexedChunks >= SETTLE_SEARCH_AFTER_CHUNKS) {
        await this.store
          .settleChunkSearch()
          .catch((error: unknown) => log.warn({ err: error }, 'readying the chunks for keyword search failed; autovacuum will'));
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
  private claim(jobId: string): Promise<IngestionJobRow | undefined> {
    return this.store.claim(jobId, this.options.instanceId, this.options.leaseSeconds);
  }

  private renew(jobId: string): Promise<boolean> {
    return this.store.renew(jobId, this.options.instanceId, this.options.leaseSeconds);
  }

  /** Adds a document's result and renews the lease; false when this worker no longer holds the job. */
  private record(jobId: string, result: DocumentResult): Promise<boolean> {
    return this.store.record(jobId, this.options.instanceId, result, this.options.leaseSeconds);
  }

  /** Ends the job: `failed` on an error or when every document failed, `partially_failed` when some did. */
  private async finish(jobId: string, error: string | null): Promise<void> {
    await this.store.finish(jobId, this.options.instanceId, error);
    if (error) await this.releaseDocuments(jobId, error);
  }

  /**
   * Finds running jobs whose lease lapsed (their worker died or hung): each
   * becomes `recovering` and is queued again, or, after MAX_ATTEMPTS claims,
   * `failed` with its unfinished documents marked failed.
   */
  async supervise(jobs: JobScheduler): Promise<void> {
    const expired = await this.store.expireLeases(MAX_ATTEMPTS);
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
  private releaseDocuments(jobId: string, reason: string): Promise<void> {
    return this.store.releaseDocuments(jobId, reason);
  }
}
