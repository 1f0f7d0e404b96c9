import { randomUUID } from 'node:crypto';
import { NotFoundError, ValidationError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { chunkDocument, parseChunking, type Chunking } from './chunking.js';
import type { DocumentRepository, DocumentRow } from './document-store.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { InspectRunStore, type InspectResult, type RunRow } from './inspect-run-store.js';
import type { KnowledgeSources } from './sources.js';
import type { VectorIndex } from './vector-index.js';

export const inspectSchema = z
  .object({
    inspection_mode: z.enum(['vector_health', 'chunking_preview']),
    candidate_chunking_strategy: z.string().min(1).max(64).optional(),
    candidate_chunking_params: z.record(z.string(), z.unknown()).optional(),
    document_ids: z.array(z.string().uuid()).max(1000).optional(),
  })
  .strict();
export type InspectInput = z.output<typeof inspectSchema>;

/**
 * Manual inspect runs (spec 4.8 rule 3, 3.6). `vector_health` counts each
 * document's live points and writes back `vector_status`, the counts and
 * `vector_verified_at`; `chunking_preview` chunks parse snapshots with a
 * candidate strategy and writes nothing but the run. Runs complete within
 * the request; results keep the filename and survive the document.
 */
export class InspectRuns {
  private readonly store: InspectRunStore;

  constructor(
    /** For the audit row each run commits with. */
    private readonly db: Sequelize,
    private readonly sources: KnowledgeSources,
    private readonly documents: DocumentRepository,
    private readonly index: VectorIndex,
  ) {
    this.store = new InspectRunStore(db);
  }

  async create(sourceId: string, input: InspectInput, op: Operation) {
    await this.sources.find(sourceId);
    let candidate: Chunking | null = null;
    if (input.inspection_mode === 'chunking_preview') {
      if (!input.candidate_chunking_strategy)
        throw new ValidationError([
          { loc: ['body', 'candidate_chunking_strategy'], msg: 'chunking_preview needs candidate_chunking_strategy', type: 'missing' },
        ]);
      candidate = parseChunking(input.candidate_chunking_strategy, input.candidate_chunking_params, {
        strategy: ['body', 'candidate_chunking_strategy'],
        params: ['body', 'candidate_chunking_params'],
      });
    }
    const scoped = input.document_ids?.length ? input.document_ids : null;
    const rows = await this.scope(sourceId, input.inspection_mode, scoped);
    const results: InspectResult[] = [];
    for (const row of rows) results.push(candidate ? await this.preview(row, candidate) : await this.vectorHealth(row, scoped !== null));
    const id = randomUUID();
    const summary = { documents_inspected: results.length, ...countBy(results.map((r) => r.outcome)) };
    await this.store.transaction(async (transaction) => {
      await this.store.insert(
        { id, sourceId, mode: input.inspection_mode, candidate, documentIds: scoped ?? [], summary },
        results,
        op.operator.admin_user_id,
        transaction,
      );
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        { action: 'inspect_run.create', target_type: 'inspect_run', target_id: id, payload: { source_id: sourceId, inspection_mode: input.inspection_mode } },
        transaction,
      );
    });
    return this.get(sourceId, id);
  }

  async list(sourceId: string, options: { limit: number; cursor?: string }) {
    await this.sources.find(sourceId);
    return this.store.page(sourceId, options, presentRun);
  }

  async get(sourceId: string, runId: string) {
    const run = await this.store.find(sourceId, runId);
    if (!run) throw new NotFoundError(`inspect run ${runId} not found in knowledge source ${sourceId}`, { code: 'INSPECT_RUN_NOT_FOUND' });
    return { ...presentRun(run), results: await this.store.results(runId) };
  }

  /** Scoped: the named documents (each must be in the source); else `vector_health` takes the indexed documents and `chunking_preview` all. */
  private async scope(sourceId: string, mode: InspectInput['inspection_mode'], ids: string[] | null): Promise<DocumentRow[]> {
    if (ids) {
      const rows = await this.store.documentsAmong(sourceId, ids);
      const found = new Set(rows.map((r) => r.id));
      const issues = ids.flatMap((id, i) =>
        found.has(id) ? [] : [{ loc: ['body', 'document_ids', i], msg: `document ${id} is not in source ${sourceId}`, type: 'value_error' }],
      );
      if (issues.length) throw new ValidationError(issues);
      return rows;
    }
    return this.store.documents(sourceId, mode === 'chunking_preview');
  }

  private async vectorHealth(row: DocumentRow, scoped: boolean): Promise<InspectResult> {
    const base = { document_id: row.id, document_filename: row.filename };
    if (row.status !== 'indexed' && scoped) {
      return {
        ...base,
        outcome: 'not_indexed',
        details: { status: row.status, vector_status: row.vector_status },
        recommendations: [{ action: 'run_ingestion', reason: `the document is ${row.status}, not indexed` }],
      };
    }
    let collection: string;
    let actual: number;
    try {
      collection = this.index.collectionFor(row.source_id);
      actual = row.vector_collection === collection ? await this.index.countDocument(collection, row.id) : 0;
    } catch (error) {
      return { ...base, outcome: 'error', details: { error: (error as Error).message }, recommendations: [] };
    }
    const expected = row.expected_point_count ?? 0;
    const healthy = row.vector_collection === collection && actual === expected;
    const vectorStatus = healthy ? 'indexed' : actual === 0 ? 'reindex_required' : 'verification_failed';
    await this.store.recordVectorHealth(row.id, vectorStatus, actual);
    const reason =
      row.vector_collection !== collection
        ? 'the document was indexed with another embedder model (or never), so the current collection holds none of its points'
        : `the vector store holds ${actual} points, expected ${expected}`;
    return {
      ...base,
      outcome: healthy ? 'healthy' : 'unhealthy',
      details: { expected_point_count: expected, actual_point_count: actual, vector_status: vectorStatus, collection },
      // Rebuilding from the snapshot is enough when there is one; otherwise ingestion must parse the file again.
      recommendations: healthy ? [] : [{ action: (await this.documents.hasSnapshot(row.id)) ? 'rebuild_from_snapshot' : 'run_ingestion', reason }],
    };
  }

  private async preview(row: DocumentRow, candidate: Chunking): Promise<InspectResult> {
    const base = { document_id: row.id, document_filename: row.filename };
    const snapshot = await this.documents.snapshot(row.id);
    if (!snapshot)
      return {
        ...base,
        outcome: 'no_snapshot',
        details: { status: row.status },
        recommendations: [{ action: 'run_ingestion', reason: 'the document has no parse snapshot yet' }],
      };
    const chunks = await chunkDocument(snapshot, candidate);
    const lengths = chunks.map((c) => c.content.length);
    const current = row.chunking_strategy ? { strategy: row.chunking_strategy, params: row.chunking_params } : null;
    const same = current?.strategy === candidate.strategy && JSON.stringify(current.params) === JSON.stringify(candidate.params);
    return {
      ...base,
      outcome: 'previewed',
      details: {
        current_chunking_strategy: current?.strategy ?? null,
        current_chunking_params: current?.params ?? null,
        current_chunk_count: row.expected_point_count,
        candidate_chunk_count: chunks.length,
        candidate_average_characters: lengths.length ? Math.round(lengths.reduce((a, b) => a + b, 0) / lengths.length) : 0,
        candidate_max_characters: lengths.length ? Math.max(...lengths) : 0,
        sample_chunks: chunks.slice(0, 3).map((c) => c.content.slice(0, 300)),
      },
      recommendations: same
        ? []
        : [
            {
              action: 'rebuild_from_snapshot',
              reason: 'rebuild to index the document with the candidate chunking',
              chunking_strategy: candidate.strategy,
              chunking_params: candidate.params,
            },
          ],
    };
  }
}

function countBy(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function presentRun(row: RunRow) {
  return {
    run_id: row.id,
    source_id: row.source_id,
    inspection_mode: row.inspection_mode,
    candidate_chunking_strategy: row.candidate_chunking_strategy,
    candidate_chunking_params: row.candidate_chunking_params,
    document_ids: row.document_ids,
    status: row.status,
    summary: row.summary,
    error_message: row.error_message,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
