import { NotFoundError, type ParsedDocument } from '@agent-host/sdk';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';
import type { Chunk, Chunking } from './chunking.js';

export interface DocumentRow {
  id: string;
  source_id: string;
  filename: string;
  content_type: string;
  size_bytes: string;
  sha256: string;
  object_key: string;
  status: 'uploaded' | 'processing' | 'indexed' | 'failed';
  vector_status: 'pending_verification' | 'indexed' | 'reindex_required' | 'verification_failed';
  expected_point_count: number | null;
  actual_point_count: number | null;
  vector_verified_at: Date | null;
  vector_collection: string | null;
  chunking_strategy: string | null;
  chunking_params: Record<string, number> | null;
  error_message: string | null;
  metadata_json: Record<string, unknown>;
  indexed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Document rows and their derived data in Postgres: status transitions, the
 * parse snapshot and the chunks (with their full-text vectors for the
 * keyword fallback).
 */
export class DocumentRepository {
  constructor(
    private readonly db: Sequelize,
    private readonly textSearchConfig: string,
  ) {}

  /** The source's documents, newest first, optionally of one status. */
  page<T>(sourceId: string, status: string | null, page: { limit: number; cursor?: string }, present: (row: DocumentRow) => T | Promise<T>) {
    return newestFirst<DocumentRow, T>(
      this.db,
      { from: 'knowledge_documents', where: 'r.source_id = $1 AND ($2::text IS NULL OR r.status = $2)', bind: [sourceId, status] },
      page,
      present,
    );
  }

  /** A new upload's row: `uploaded`, its vectors to build. */
  async insert(
    document: {
      id: string;
      sourceId: string;
      filename: string;
      contentType: string;
      size: number;
      sha256: string;
      objectKey: string;
      metadata: Record<string, unknown>;
    },
    createdBy: string | null,
    transaction: Transaction,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO knowledge_documents (id, source_id, filename, content_type, size_bytes, sha256, object_key, status, vector_status, metadata_json, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, 'uploaded', 'reindex_required', $8, $9, now(), now())`,
      {
        bind: [
          document.id,
          document.sourceId,
          document.filename,
          document.contentType,
          document.size,
          document.sha256,
          document.objectKey,
          JSON.stringify(document.metadata),
          createdBy,
        ],
        transaction,
      },
    );
  }

  async delete(documentId: string, transaction: Transaction): Promise<void> {
    await this.db.query('DELETE FROM knowledge_documents WHERE id = $1', { bind: [documentId], transaction });
  }

  async find(documentId: string): Promise<DocumentRow | undefined> {
    const [row] = await this.db.query<DocumentRow>('SELECT * FROM knowledge_documents WHERE id = try_uuid($1)', {
      bind: [documentId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  async require(sourceId: string, documentId: string): Promise<DocumentRow> {
    const row = await this.find(documentId);
    if (!row || row.source_id !== sourceId)
      throw new NotFoundError(`document ${documentId} not found in knowledge source ${sourceId}`, { code: 'DOCUMENT_NOT_FOUND' });
    return row;
  }

  /** Work has started: waiting for vectors. */
  async markProcessing(documentId: string): Promise<void> {
    await this.db.query(
      "UPDATE knowledge_documents SET status = 'processing', vector_status = 'pending_verification', error_message = NULL, updated_at = now() WHERE id = $1",
      { bind: [documentId] },
    );
  }

  /**
   * A failure never leaves a waiting `vector_status` (spec 2.6): a failed
   * verification is `verification_failed`, any other failure
   * `reindex_required`.
   */
  async markFailed(
    documentId: string,
    message: string,
    vectorStatus: 'reindex_required' | 'verification_failed',
    counts?: { expected: number; actual: number },
  ): Promise<void> {
    await this.db.query(
      `UPDATE knowledge_documents SET status = 'failed', vector_status = $2, error_message = $3,
         expected_point_count = COALESCE($4, expected_point_count), actual_point_count = COALESCE($5, actual_point_count),
         vector_verified_at = CASE WHEN $5::int IS NULL THEN vector_verified_at ELSE now() END, updated_at = now() WHERE id = $1`,
      { bind: [documentId, vectorStatus, message.slice(0, 4000), counts?.expected ?? null, counts?.actual ?? null] },
    );
  }

  /** Verified: as many points as chunks. Resolves false when the document was deleted meanwhile. */
  async markIndexed(documentId: string, result: { collection: string; chunking: Chunking; count: number }): Promise<boolean> {
    const rows = await this.db.query(
      `UPDATE knowledge_documents SET status = 'indexed', vector_status = 'indexed', error_message = NULL, expected_point_count = $2, actual_point_count = $2,
         vector_verified_at = now(), vector_collection = $3, chunking_strategy = $4, chunking_params = $5, indexed_at = now(), updated_at = now()
       WHERE id = $1 RETURNING id`,
      { bind: [documentId, result.count, result.collection, result.chunking.strategy, JSON.stringify(result.chunking.params)], type: QueryTypes.SELECT },
    );
    return rows.length > 0;
  }

  /** Records where the document's points are before they are written, so a delete finds them even if the job dies. */
  async recordCollection(documentId: string, collection: string): Promise<void> {
    await this.db.query('UPDATE knowledge_documents SET vector_collection = $2, updated_at = now() WHERE id = $1', { bind: [documentId, collection] });
  }

  /**
   * Counts a parse of the document as begun; resolves with how many earlier ones never finished (the host stopped
   * while parsing it, so the document may be what stopped it).
   */
  async beginParse(documentId: string): Promise<number> {
    const [row] = await this.db.query<{ unfinished: number }>(
      'UPDATE knowledge_documents SET unfinished_parses = unfinished_parses + 1 WHERE id = $1 RETURNING unfinished_parses - 1 AS unfinished',
      { bind: [documentId], type: QueryTypes.SELECT },
    );
    return row?.unfinished ?? 0;
  }

  /** The parse ended, whichever way. */
  async endParse(documentId: string): Promise<void> {
    await this.db.query('UPDATE knowledge_documents SET unfinished_parses = 0 WHERE id = $1', { bind: [documentId] });
  }

  async saveSnapshot(documentId: string, parsed: ParsedDocument, transaction?: Transaction): Promise<void> {
    await this.db.query(
      `INSERT INTO knowledge_parse_snapshots (document_id, text, elements, metadata, created_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (document_id) DO UPDATE SET text = EXCLUDED.text, elements = EXCLUDED.elements, metadata = EXCLUDED.metadata, created_at = now()`,
      {
        bind: [documentId, stripNul(parsed.text), JSON.stringify(parsed.elements).replace(/\\u0000/g, ''), JSON.stringify(parsed.metadata)],
        ...(transaction && { transaction }),
      },
    );
  }

  async hasSnapshot(documentId: string): Promise<boolean> {
    const rows = await this.db.query('SELECT 1 FROM knowledge_parse_snapshots WHERE document_id = $1', { bind: [documentId], type: QueryTypes.SELECT });
    return rows.length > 0;
  }

  async snapshot(documentId: string): Promise<(ParsedDocument & { created_at: Date }) | undefined> {
    const [row] = await this.db.query<ParsedDocument & { created_at: Date }>(
      'SELECT text, elements, metadata, created_at FROM knowledge_parse_snapshots WHERE document_id = $1',
      {
        bind: [documentId],
        type: QueryTypes.SELECT,
      },
    );
    return row;
  }

  /** Replaces the document's chunks in one statement. */
  async replaceChunks(document: { id: string; source_id: string }, chunks: (Chunk & { id: string })[]): Promise<void> {
    await this.db.transaction(async (transaction) => {
      await this.db.query('DELETE FROM knowledge_chunks WHERE document_id = $1', { bind: [document.id], transaction });
      if (!chunks.length) return;
      await this.db.query(
        `INSERT INTO knowledge_chunks (id, document_id, source_id, chunk_index, content, metadata, search_vector)
         SELECT c.id, $1, $2, c.chunk_index, c.content, c.metadata, to_tsvector($3::regconfig, c.content)
         FROM jsonb_to_recordset($4::jsonb) AS c(id text, chunk_index int, content text, metadata jsonb)`,
        {
          bind: [
            document.id,
            document.source_id,
            this.textSearchConfig,
            JSON.stringify(chunks.map((c, i) => ({ id: c.id, chunk_index: i, content: stripNul(c.content), metadata: c.metadata }))),
          ],
          transaction,
        },
      );
    });
  }
}

// Postgres text cannot hold NUL; a parser may pass one through from a binary format.
const stripNul = (text: string) => text.replace(/\u0000/g, '');
