import type { DocumentParser, Embedder, JobScheduler, Logger, Retriever } from '@agent-host/sdk';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import type { Sequelize } from 'sequelize';
import type { HostConfig } from '../config/schema.js';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { DocumentIndexer } from './document-indexer.js';
import { DocumentRepository } from './document-store.js';
import { KnowledgeDocuments } from './documents.js';
import { KnowledgeCorrections } from './corrections.js';
import { checkEmbeddingReadiness } from './embedding-readiness.js';
import { IngestionJobs } from './ingestion-jobs.js';
import { IngestionWorker } from './ingestion-worker.js';
import { InspectRuns } from './inspect-runs.js';
import { KnowledgeMounts } from './mounts.js';
import { ragDebug, type RagDebugInput } from './rag-debug.js';
import { RetrievalStore } from './retrieval-store.js';
import { Retrieval } from './retrieval.js';
import { KnowledgeSources } from './sources.js';
import { TurnRetrieval, type RetrievingAgent } from './turn-retrieval.js';
import { VectorIndex } from './vector-index.js';

export interface KnowledgeDeps {
  db: Sequelize;
  config: HostConfig['knowledge'];
  instanceId: string;
  parsers: KeyedRegistry<DocumentParser>;
  embedders: KeyedRegistry<Embedder>;
  retrievers: KeyedRegistry<Retriever>;
  objectStore: StreamingObjectStore;
  logger: Logger;
}

/** The knowledge domain (spec 2.3, 2.6, 4.8): sources, mounts, documents, ingestion, inspect runs, retrieval and managed corrections. */
export class Knowledge {
  readonly sources: KnowledgeSources;
  readonly mounts: KnowledgeMounts;
  readonly documents: KnowledgeDocuments;
  readonly ingestion: IngestionJobs;
  readonly inspectRuns: InspectRuns;
  readonly retrieval: Retrieval;
  readonly corrections: KnowledgeCorrections;
  private readonly index: VectorIndex;
  private readonly worker: IngestionWorker;
  private scheduler?: JobScheduler;

  constructor(private readonly deps: KnowledgeDeps) {
    const { db, config, logger } = deps;
    const repository = new DocumentRepository(db, config.text_search_config);
    this.index = new VectorIndex(deps.embedders, deps.retrievers, config.embedder, config.retriever);
    this.sources = new KnowledgeSources(db);
    this.mounts = new KnowledgeMounts(db);
    this.documents = new KnowledgeDocuments(db, repository, this.sources, deps.parsers, deps.objectStore, this.index, config.upload_max_bytes, logger);
    this.ingestion = new IngestionJobs(db, this.sources, repository, () => this.requireScheduler());
    this.inspectRuns = new InspectRuns(db, this.sources, repository, this.index);
    this.retrieval = new Retrieval(db, this.index, config, logger);
    this.corrections = new KnowledgeCorrections(db, this.sources, this.mounts, this.documents, repository, this.ingestion, logger);
    const indexer = new DocumentIndexer(repository, deps.parsers, deps.objectStore, this.index, logger, config.vector_retry_seconds);
    this.worker = new IngestionWorker(
      db,
      this.sources,
      indexer,
      {
        instanceId: deps.instanceId,
        leaseSeconds: config.ingestion_lease_seconds,
        supervisorIntervalSeconds: config.ingestion_supervisor_interval_seconds,
        settle: () => this.corrections.settle(),
      },
      logger,
    );
  }

  /** Checks the text search configuration and defines the ingestion jobs; call before the job store starts. */
  async start(jobs: JobScheduler): Promise<void> {
    await new RetrievalStore(this.deps.db).checkTextSearchConfig(this.deps.config.text_search_config).catch((error: unknown) => {
      throw new Error(`[knowledge] text_search_config "${this.deps.config.text_search_config}" is not a Postgres text search configuration`, { cause: error });
    });
    this.scheduler = jobs;
    await this.worker.define(jobs);
  }

  /** The retrieval handle of one chat turn, which logs through the turn's `log`. */
  turnRetrieval(agent: RetrievingAgent | null, log: Logger): TurnRetrieval {
    return new TurnRetrieval(this.retrieval, agent, log);
  }

  checkEmbeddingReadiness() {
    return checkEmbeddingReadiness(this.index);
  }

  ragDebug(sessionId: string, turnId: string, input: RagDebugInput) {
    return ragDebug(this.deps.db, this.retrieval, sessionId, turnId, input);
  }

  private requireScheduler(): JobScheduler {
    if (!this.scheduler) throw new Error('knowledge jobs are not defined yet');
    return this.scheduler;
  }
}
