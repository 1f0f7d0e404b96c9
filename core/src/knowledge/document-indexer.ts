import {
  ServiceUnavailableError,
  UpstreamError,
  UpstreamTimeoutError,
  type DocumentParser,
  type Logger,
  type ObjectStoreBackend,
  type ParsedDocument,
} from '@agent-host/sdk';
import pRetry from 'p-retry';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { chunkDocument, type Chunking } from './chunking.js';
import type { DocumentRepository, DocumentRow } from './document-store.js';
import { baseContentType } from './documents.js';
import { pointId, type VectorIndex } from './vector-index.js';

/** What became of one document in a job. */
export interface DocumentResult {
  document_id: string;
  filename: string | null;
  status: 'indexed' | 'failed' | 'skipped';
  point_count?: number;
  error?: string;
}

export type IndexMode = 'ingest' | 'rebuild_from_snapshot';

/** Interrupted parses after which a document is failed instead of parsed again. */
const MAX_UNFINISHED_PARSES = 2;

/** A vector store that cannot be reached, times out or is busy may come back; one that refuses a write will not. */
const mayComeBack = (error: unknown) => error instanceof UpstreamError || error instanceof UpstreamTimeoutError || error instanceof ServiceUnavailableError;

/** A failure whose `vector_status` is `verification_failed` rather than `reindex_required`. */
class VerificationError extends Error {
  constructor(
    message: string,
    readonly counts: { expected: number; actual: number },
  ) {
    super(message);
  }
}

/**
 * One document through the pipeline: parse (or read the parse snapshot when
 * rebuilding) -> store the snapshot -> chunk -> embed -> replace its chunks in
 * Postgres and its points in the vector store -> verify the point count.
 * Idempotent: a second run over the same document (a recovered job) ends in
 * the same single set of chunks and points.
 */
export class DocumentIndexer {
  constructor(
    private readonly repository: DocumentRepository,
    private readonly parsers: KeyedRegistry<DocumentParser>,
    private readonly objectStore: ObjectStoreBackend,
    private readonly index: VectorIndex,
    private readonly logger: Logger,
    /** `[knowledge] vector_retry_seconds`: how long the vector store's part is tried again while the store is away. */
    private readonly vectorRetrySeconds: number,
  ) {}

  async run(documentId: string, mode: IndexMode, chunkingOverride: Chunking | null, sourceChunking: Chunking): Promise<DocumentResult> {
    const row = await this.repository.find(documentId);
    if (!row) return { document_id: documentId, filename: null, status: 'skipped', error: 'the document was deleted' };
    const log = this.logger.child({ document_id: documentId, mode });
    await this.repository.markProcessing(documentId);
    // Where a document's time goes, in its log line: bench/ingest sums them per stage.
    const stageMs: Record<string, number> = {};
    const stage = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
      const started = performance.now();
      try {
        return await work();
      } finally {
        stageMs[name] = (stageMs[name] ?? 0) + Math.round(performance.now() - started);
      }
    };
    try {
      const parsed = await stage('parse', () => (mode === 'ingest' ? this.parse(row) : this.readSnapshot(row)));
      const chunking = chunkingOverride ?? sourceChunking;
      const chunks = (await stage('chunk', () => chunkDocument(parsed, chunking))).map((chunk, i) => ({ ...chunk, id: pointId(row.id, i) }));
      const vectors = await stage('embed', () => this.index.embed(chunks.map((c) => c.content)));
      const collection = this.index.collectionFor(row.source_id);
      const actual = await this.whileVectorStoreIsAway(log, async () => {
        if (row.vector_collection && row.vector_collection !== collection) await this.index.deleteDocument(row.vector_collection, row.id);
        await stage('database', async () => {
          await this.repository.recordCollection(row.id, collection);
          await this.repository.replaceChunks(row, chunks);
        });
        await stage('upsert', () =>
          this.index.replaceDocument(
            collection,
            row.id,
            chunks.map((c) => c.id),
            vectors,
          ),
        );
        return stage('verify', () => this.index.countDocument(collection, row.id));
      });
      if (actual !== chunks.length)
        throw new VerificationError(`the vector store holds ${actual} points for this document, expected ${chunks.length}`, {
          expected: chunks.length,
          actual,
        });
      if (!(await stage('database', () => this.repository.markIndexed(row.id, { collection, chunking, count: chunks.length })))) {
        // Deleted while it was being indexed: take back what this run wrote.
        await this.index.deleteDocument(collection, row.id);
        return { document_id: row.id, filename: row.filename, status: 'skipped', error: 'the document was deleted' };
      }
      log.info({ chunks: chunks.length, stage_ms: stageMs }, 'document indexed');
      return { document_id: row.id, filename: row.filename, status: 'indexed', point_count: chunks.length };
    } catch (error) {
      const message = (error as Error).message;
      log.warn({ err: error }, 'document failed');
      if (error instanceof VerificationError) await this.repository.markFailed(row.id, message, 'verification_failed', error.counts);
      else await this.repository.markFailed(row.id, message, 'reindex_required');
      return { document_id: row.id, filename: row.filename, status: 'failed', error: message };
    }
  }

  /**
   * Runs the writing part of indexing (idempotent: delete, then write) again while the vector store cannot be reached,
   * backing off from 1 s to 15 s, for up to `[knowledge] vector_retry_seconds`. The document's parse and embeddings are
   * kept meanwhile, and its job keeps its lease, so a store that comes back in time loses nothing.
   */
  private async whileVectorStoreIsAway<T>(log: Logger, work: () => Promise<T>): Promise<T> {
    const started = Date.now();
    try {
      return await pRetry(work, {
        retries: Infinity,
        maxRetryTime: this.vectorRetrySeconds * 1000,
        minTimeout: 1000,
        maxTimeout: 15_000,
        shouldRetry: ({ error }) => mayComeBack(error),
        onFailedAttempt: ({ error, attemptNumber }) => {
          if (mayComeBack(error)) log.warn({ reason: error.message, attempt: attemptNumber }, 'the vector store did not take the document; trying again');
        },
      });
    } catch (error) {
      if (!mayComeBack(error) || this.vectorRetrySeconds === 0) throw error;
      const waited = Math.round((Date.now() - started) / 1000);
      throw new Error(`the vector store was away for the ${waited} s this document waited ([knowledge] vector_retry_seconds): ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  private async parse(row: DocumentRow): Promise<ParsedDocument> {
    const parser = this.parsers.get(baseContentType(row.content_type));
    if (!parser) throw new Error(`no document parser handles content type "${row.content_type}" any more`);
    // Counted before the parse starts. One interrupted parse may be a restart that had nothing to do with the
    // document and is tried again; after two, the document is taken for what stops the host and is not parsed into
    // another crash.
    const unfinished = await this.repository.beginParse(row.id);
    try {
      if (unfinished >= MAX_UNFINISHED_PARSES) {
        throw new Error(
          `${unfinished} earlier parses of this document never finished (the host stopped while parsing it), so it is not parsed again on its own; ingest the source again to retry it`,
        );
      }
      if (unfinished > 0) this.logger.warn({ document_id: row.id, unfinished }, 'an earlier parse of this document never finished; parsing it once more');
      const { data } = await this.objectStore.get(row.object_key);
      const parsed = await parser.parse({ data, filename: row.filename, contentType: row.content_type });
      await this.repository.saveSnapshot(row.id, parsed);
      return parsed;
    } finally {
      await this.repository.endParse(row.id);
    }
  }

  private async readSnapshot(row: DocumentRow): Promise<ParsedDocument> {
    const snapshot = await this.repository.snapshot(row.id);
    if (!snapshot) throw new Error('the document has no parse snapshot; run ingestion instead');
    return snapshot;
  }
}
