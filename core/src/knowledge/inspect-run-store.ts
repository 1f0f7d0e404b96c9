import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';
import { newestFirst } from '../db/keyset-cursor.js';
import type { Chunking } from './chunking.js';
import type { DocumentRow } from './document-store.js';

interface Recommendation {
  action: 'run_ingestion' | 'rebuild_from_snapshot';
  reason: string;
  chunking_strategy?: string;
  chunking_params?: Record<string, number>;
}

export interface InspectResult {
  document_id: string;
  document_filename: string;
  outcome: string;
  details: Record<string, unknown>;
  recommendations: Recommendation[];
}

export interface RunRow {
  id: string;
  source_id: string;
  inspection_mode: string;
  candidate_chunking_strategy: string | null;
  candidate_chunking_params: Record<string, number> | null;
  document_ids: string[];
  status: string;
  summary: Record<string, number>;
  error_message: string | null;
  created_at: Date;
  completed_at: Date | null;
}

/** The SQL of inspect runs: `knowledge_inspect_runs` and their results, the documents they inspect, and what a health check writes back. */
export class InspectRunStore extends SqlStore {
  /** The source's documents among `ids`, oldest first. */
  documentsAmong(sourceId: string, ids: string[]): Promise<DocumentRow[]> {
    return this.db.query<DocumentRow>('SELECT * FROM knowledge_documents WHERE source_id = $1 AND id = ANY($2::uuid[]) ORDER BY created_at, id', {
      bind: [sourceId, ids],
      type: QueryTypes.SELECT,
    });
  }

  /** The source's indexed documents (all of them with `all`), oldest first. */
  documents(sourceId: string, all: boolean): Promise<DocumentRow[]> {
    return this.db.query<DocumentRow>(`SELECT * FROM knowledge_documents WHERE source_id = $1 AND ($2 OR status = 'indexed') ORDER BY created_at, id`, {
      bind: [sourceId, all],
      type: QueryTypes.SELECT,
    });
  }

  /** What a vector health check found for the document. */
  async recordVectorHealth(documentId: string, vectorStatus: string, actualPoints: number): Promise<void> {
    await this.db.query(
      'UPDATE knowledge_documents SET vector_status = $2, actual_point_count = $3, vector_verified_at = now(), updated_at = now() WHERE id = $1',
      {
        bind: [documentId, vectorStatus, actualPoints],
      },
    );
  }

  /** A completed run with its results, in order. */
  async insert(
    run: { id: string; sourceId: string; mode: string; candidate: Chunking | null; documentIds: string[]; summary: Record<string, number> },
    results: InspectResult[],
    createdBy: string | null,
    transaction: Transaction,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO knowledge_inspect_runs (id, source_id, inspection_mode, candidate_chunking_strategy, candidate_chunking_params, document_ids, status, summary, created_by, created_at, completed_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'completed', $7, $8, now(), now())`,
      {
        bind: [
          run.id,
          run.sourceId,
          run.mode,
          run.candidate?.strategy ?? null,
          run.candidate ? JSON.stringify(run.candidate.params) : null,
          JSON.stringify(run.documentIds),
          JSON.stringify(run.summary),
          createdBy,
        ],
        transaction,
      },
    );
    if (!results.length) return;
    await this.db.query(
      `INSERT INTO knowledge_inspect_results (id, run_id, document_id, document_filename, position, outcome, details, recommendations)
       SELECT gen_random_uuid(), $1, r.document_id, r.document_filename, r.position, r.outcome, r.details, r.recommendations
       FROM jsonb_to_recordset($2::jsonb) AS r(document_id uuid, document_filename text, position int, outcome text, details jsonb, recommendations jsonb)`,
      { bind: [run.id, JSON.stringify(results.map((r, position) => ({ ...r, position })))], transaction },
    );
  }

  page<T>(sourceId: string, page: { limit: number; cursor?: string }, present: (row: RunRow) => T) {
    return newestFirst(this.db, { from: 'knowledge_inspect_runs', where: 'r.source_id = $1', bind: [sourceId] }, page, present);
  }

  async find(sourceId: string, runId: string): Promise<RunRow | undefined> {
    const [row] = await this.db.query<RunRow>('SELECT * FROM knowledge_inspect_runs WHERE source_id = try_uuid($1) AND id = try_uuid($2)', {
      bind: [sourceId, runId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  results(runId: string): Promise<InspectResult[]> {
    return this.db.query<InspectResult>(
      'SELECT document_id, document_filename, outcome, details, recommendations FROM knowledge_inspect_results WHERE run_id = $1 ORDER BY position',
      { bind: [runId], type: QueryTypes.SELECT },
    );
  }
}
