import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError, type DocumentParser, type Logger } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { DocumentRepository, DocumentRow } from './document-store.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import type { KnowledgeSources } from './sources.js';
import type { VectorIndex } from './vector-index.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import { objectKeySegment } from '../services/object-key-segment.js';

/** The parser registry key of a content type: lower case, without parameters (`; charset=...`). */
export const baseContentType = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

/** A file the transport streamed to disk, hashing it on the way. */
export interface SpooledFile {
  path: string;
  size: number;
  sha256: string;
}

/** An uploaded file as the transport read it: in memory (small generated files) or spooled to disk (uploads). */
export interface UploadedFile {
  filename: string;
  contentType: string;
  data: Uint8Array | SpooledFile;
}

/** Size and SHA-256 of a file's bytes, wherever they are. */
function digestOf(data: UploadedFile['data']): { size: number; sha256: string } {
  if (data instanceof Uint8Array) return { size: data.byteLength, sha256: createHash('sha256').update(data).digest('hex') };
  return { size: data.size, sha256: data.sha256 };
}

/**
 * Documents of a source (spec 2.6, 4.8): uploads keep the original bytes in
 * the object store and the original `filename` and `content_type`; deleting
 * removes the vectors, the chunks, the snapshot and the stored bytes.
 */
export class KnowledgeDocuments {
  constructor(
    private readonly db: Sequelize,
    private readonly repository: DocumentRepository,
    private readonly sources: KnowledgeSources,
    private readonly parsers: KeyedRegistry<DocumentParser>,
    private readonly objectStore: StreamingObjectStore,
    private readonly index: VectorIndex,
    readonly uploadMaxBytes: number,
    private readonly logger: Logger,
  ) {}

  /** Refuses (415) a content type no registered parser reads; the transport asks before it reads the file. */
  checkContentType(contentType: string): void {
    if (this.parsers.has(baseContentType(contentType))) return;
    const supported = this.parsers
      .list()
      .map((p) => p.key)
      .sort();
    throw new UnsupportedMediaTypeError(
      `no document parser handles content type "${contentType}"; supported: ${supported.join(', ') || 'none (enable a parser plugin)'}`,
      { code: 'UNSUPPORTED_DOCUMENT_TYPE' },
    );
  }

  async upload(sourceId: string, file: UploadedFile, op: Operation) {
    await this.sources.requireStandard(sourceId, 'given uploads through the documents endpoint');
    if (file.filename.trim() === '') throw new BadRequestError('the uploaded file has no filename', { code: 'BAD_REQUEST' });
    if (digestOf(file.data).size > this.uploadMaxBytes)
      throw new PayloadTooLargeError(`the file is larger than the upload limit of ${this.uploadMaxBytes} bytes`, { code: 'UPLOAD_TOO_LARGE' });
    this.checkContentType(file.contentType);
    const id = await this.store(sourceId, file, {}, op);
    return this.get(sourceId, id);
  }

  /**
   * Keeps the bytes in the object store and records the document as
   * `uploaded`, with its audit row and the caller's `alsoWrite` in one
   * transaction; when that fails, the stored bytes are removed again.
   */
  async store(
    sourceId: string,
    file: UploadedFile,
    metadata: Record<string, unknown>,
    op: Operation,
    alsoWrite?: (transaction: Transaction, documentId: string) => Promise<void>,
  ): Promise<string> {
    const id = randomUUID();
    const key = `knowledge/${sourceId}/${id}/${objectKeySegment(file.filename, 'document')}`;
    const { size, sha256 } = digestOf(file.data);
    if (file.data instanceof Uint8Array) await this.objectStore.put(key, file.data, { contentType: file.contentType });
    else await this.objectStore.putStream(key, createReadStream(file.data.path), { contentType: file.contentType, size });
    try {
      await this.db.transaction(async (transaction) => {
        await this.repository.insert(
          { id, sourceId, filename: file.filename, contentType: file.contentType, size, sha256, objectKey: key, metadata },
          op.operator.admin_user_id,
          transaction,
        );
        await auditOperation(
          this.db,
          'core.knowledge',
          op,
          {
            action: 'knowledge_document.upload',
            target_type: 'knowledge_document',
            target_id: id,
            payload: { source_id: sourceId, filename: file.filename, size_bytes: size },
          },
          transaction,
        );
        await alsoWrite?.(transaction, id);
      });
    } catch (error) {
      await this.objectStore.delete(key).catch((cleanup: unknown) => this.logger.warn({ err: cleanup, key }, 'could not remove the object of a failed upload'));
      throw error;
    }
    return id;
  }

  async list(sourceId: string, options: { limit: number; cursor?: string; status?: string }) {
    await this.sources.find(sourceId);
    return this.repository.page(sourceId, options.status ?? null, options, (row) => this.present(row));
  }

  async get(sourceId: string, documentId: string) {
    return this.present(await this.repository.require(sourceId, documentId));
  }

  async delete(sourceId: string, documentId: string, op: Operation) {
    await this.sources.requireStandard(sourceId, 'changed by deleting documents');
    const row = await this.repository.require(sourceId, documentId);
    await this.purge(row, (transaction) =>
      auditOperation(
        this.db,
        'core.knowledge',
        op,
        { action: 'knowledge_document.delete', target_type: 'knowledge_document', target_id: row.id, payload: { source_id: sourceId, filename: row.filename } },
        transaction,
      ),
    );
    return { status: 'deleted', document_id: row.id };
  }

  /**
   * Removes a document: its vectors first (a failure leaves everything in
   * place), then its rows with the caller's `alsoWrite` in one transaction,
   * then its stored bytes.
   */
  async purge(row: DocumentRow, alsoWrite?: (transaction: Transaction) => Promise<void>): Promise<void> {
    if (row.vector_collection) await this.index.deleteDocument(row.vector_collection, row.id);
    await this.db.transaction(async (transaction) => {
      await this.repository.delete(row.id, transaction);
      await alsoWrite?.(transaction);
    });
    await this.objectStore
      .delete(row.object_key)
      .catch((error: unknown) => this.logger.warn({ err: error, key: row.object_key }, 'could not remove the stored bytes of a deleted document'));
  }

  /** The original bytes, for the same-origin download route. */
  async open(sourceId: string, documentId: string) {
    const row = await this.repository.require(sourceId, documentId);
    const { body, info } = await this.objectStore.open(row.object_key);
    return { body, size: info.size, filename: row.filename, contentType: row.content_type };
  }

  /**
   * The document as the API shows it. A presigned URL is passed on; when the
   * store offers only its proxy, `download_url` is this document's own
   * download route, which sends the original filename.
   */
  private async present(row: DocumentRow) {
    const download = await this.objectStore.describeDownload(row.object_key);
    const downloadUrl =
      download.download_mode === 'object_store_proxy' ? `/knowledge-sources/${row.source_id}/documents/${row.id}/download` : download.download_url;
    return {
      document_id: row.id,
      source_id: row.source_id,
      filename: row.filename,
      content_type: row.content_type,
      size_bytes: Number(row.size_bytes),
      sha256: row.sha256,
      status: row.status,
      processing_status: row.status,
      vector_status: row.vector_status,
      expected_point_count: row.expected_point_count,
      actual_point_count: row.actual_point_count,
      vector_verified_at: row.vector_verified_at?.toISOString() ?? null,
      chunking_strategy: row.chunking_strategy,
      chunking_params: row.chunking_params,
      error_message: row.error_message,
      metadata_json: row.metadata_json,
      download_url: downloadUrl,
      download_mode: download.download_mode,
      download_warning: download.download_warning,
      indexed_at: row.indexed_at?.toISOString() ?? null,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}
