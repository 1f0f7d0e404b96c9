import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';
import { SqlStore } from '../db/sql-store.js';
import type { DatasetItemInput } from './csv-items.js';

/** What a dataset holds: questions with expected answers for chat agents, or reviewed document-recognition runs. */
export type TaskType = 'qa' | 'document_recognition';

export interface DatasetRow {
  id: string;
  name: string;
  description: string;
  task_type: TaskType;
  frozen: boolean;
  parent_dataset_id: string | null;
  frozen_at: Date | null;
  item_count: number;
  source_csv_object_key: string | null;
  source_csv_filename: string | null;
  source_csv_content_type: string | null;
  source_csv_size_bytes: string | null;
  source_csv_uploaded_at: Date | null;
  created_by: string | null;
  created_at: Date;
  updated_at: Date;
  /** Frozen snapshots made from this dataset. */
  snapshot_count: number;
}

/** The document a `document_recognition` item was imported from (a snapshot holds its own copy). */
export interface SourceDocument {
  object_key: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  sha256: string;
}

/** An item made from a reviewed document-recognition run: its document and the reviewed field values it expects. */
export interface RecognitionItemInput extends DatasetItemInput {
  source_run_id: string;
  source_document: SourceDocument;
  expected_fields: Record<string, unknown>;
}

export interface ItemRow extends DatasetItemInput {
  id: string;
  dataset_id: string;
  position: number;
  created_at: Date;
  source_run_id: string | null;
  source_document: SourceDocument | null;
  expected_fields: Record<string, unknown> | null;
}

/** The source CSV of a dataset as the object store keeps it. */
export interface SourceCsv {
  object_key: string;
  filename: string;
  content_type: string;
  size_bytes: number;
}

const WITH_SNAPSHOTS = `(SELECT d.*, (SELECT count(*)::int FROM evaluation_datasets c WHERE c.parent_dataset_id = d.id) AS snapshot_count
  FROM evaluation_datasets d)`;

/** Evaluation datasets and their items (migration 0027). */
export class DatasetStore extends SqlStore {
  async insert(input: { name: string; description: string; task_type: TaskType }, createdBy: string | null, transaction: Transaction): Promise<string> {
    const id = randomUUID();
    await this.db.query(
      `INSERT INTO evaluation_datasets (id, name, description, task_type, created_by, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, now(), now())`,
      { bind: [id, input.name, input.description, input.task_type, createdBy], transaction },
    );
    return id;
  }

  async find(id: string, transaction?: Transaction, lock = false): Promise<DatasetRow | undefined> {
    const [row] = await this.db.query<DatasetRow>(
      lock
        ? `SELECT *, 0 AS snapshot_count FROM evaluation_datasets WHERE id = try_uuid($1) FOR UPDATE`
        : `SELECT * FROM ${WITH_SNAPSHOTS} AS d WHERE id = try_uuid($1)`,
      { bind: [id], type: QueryTypes.SELECT, transaction },
    );
    return row;
  }

  page<T>(filters: { task_type?: TaskType; frozen?: boolean }, page: { limit: number; cursor?: string }, present: (row: DatasetRow) => T) {
    const bind: unknown[] = [];
    const clauses: string[] = [];
    if (filters.task_type) clauses.push(`r.task_type = $${bind.push(filters.task_type)}`);
    if (filters.frozen !== undefined) clauses.push(`r.frozen = $${bind.push(filters.frozen)}`);
    return newestFirst(this.db, { from: WITH_SNAPSHOTS, where: clauses.join(' AND ') || 'true', bind }, page, present);
  }

  /** Replaces the items and the source CSV fields of an unfrozen dataset. */
  async replaceItems(id: string, items: DatasetItemInput[], csv: SourceCsv, transaction: Transaction): Promise<void> {
    await this.db.query('DELETE FROM evaluation_dataset_items WHERE dataset_id = $1', { bind: [id], transaction });
    // One statement for all items: the rows as a JSON array expanded by Postgres.
    await this.db.query(
      `INSERT INTO evaluation_dataset_items (id, dataset_id, position, question, expected_answers, domain, difficulty, source, metadata, created_at)
       SELECT gen_random_uuid(), $1, i.ordinality, i.value->>'question', i.value->'expected_answers', i.value->>'domain', i.value->>'difficulty',
              i.value->>'source', i.value->'metadata', now()
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i`,
      { bind: [id, JSON.stringify(items)], transaction },
    );
    await this.db.query(
      `UPDATE evaluation_datasets SET item_count = $2, source_csv_object_key = $3, source_csv_filename = $4, source_csv_content_type = $5,
         source_csv_size_bytes = $6, source_csv_uploaded_at = now(), updated_at = now() WHERE id = $1`,
      { bind: [id, items.length, csv.object_key, csv.filename, csv.content_type, csv.size_bytes], transaction },
    );
  }

  /** The runs a dataset's items were imported from. */
  async sourceRunIds(id: string, transaction: Transaction): Promise<Set<string>> {
    const rows = await this.db.query<{ source_run_id: string }>(
      'SELECT source_run_id FROM evaluation_dataset_items WHERE dataset_id = $1 AND source_run_id IS NOT NULL',
      { bind: [id], type: QueryTypes.SELECT, transaction },
    );
    return new Set(rows.map((row) => row.source_run_id));
  }

  /** Adds items after the dataset's last one (an import of reviewed runs adds; it replaces nothing). */
  async appendRecognitionItems(id: string, items: RecognitionItemInput[], transaction: Transaction): Promise<void> {
    await this.db.query(
      `INSERT INTO evaluation_dataset_items (id, dataset_id, position, question, expected_answers, domain, difficulty, source, metadata, source_run_id,
         source_document, expected_fields, created_at)
       SELECT gen_random_uuid(), $1, (SELECT COALESCE(max(position), 0) FROM evaluation_dataset_items WHERE dataset_id = $1) + i.ordinality,
              i.value->>'question', i.value->'expected_answers', i.value->>'domain', i.value->>'difficulty', i.value->>'source', i.value->'metadata',
              (i.value->>'source_run_id')::uuid, i.value->'source_document', i.value->'expected_fields', now()
       FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS i`,
      { bind: [id, JSON.stringify(items)], transaction },
    );
    await this.db.query(
      'UPDATE evaluation_datasets SET item_count = (SELECT count(*) FROM evaluation_dataset_items WHERE dataset_id = $1), updated_at = now() WHERE id = $1',
      { bind: [id], transaction },
    );
  }

  /**
   * A frozen child of `parent` holding copies of its items, with the copied source CSV; `documentKeys` gives the
   * copied source document of each `document_recognition` item, by position.
   */
  async insertSnapshot(
    parent: DatasetRow,
    csvKey: string | null,
    createdBy: string | null,
    transaction: Transaction,
    documentKeys: Map<number, string> = new Map(),
  ): Promise<string> {
    const id = randomUUID();
    await this.db.query(
      `INSERT INTO evaluation_datasets (id, name, description, task_type, frozen, parent_dataset_id, frozen_at, item_count, source_csv_object_key,
         source_csv_filename, source_csv_content_type, source_csv_size_bytes, source_csv_uploaded_at, created_by, created_at, updated_at)
       SELECT $1, name, description, task_type, true, id, now(), item_count, $2, source_csv_filename, source_csv_content_type,
         source_csv_size_bytes, source_csv_uploaded_at, $3, now(), now()
       FROM evaluation_datasets WHERE id = $4`,
      { bind: [id, csvKey, createdBy, parent.id], transaction },
    );
    await this.db.query(
      `INSERT INTO evaluation_dataset_items (id, dataset_id, position, question, expected_answers, domain, difficulty, source, metadata, source_run_id,
         source_document, expected_fields, created_at)
       SELECT gen_random_uuid(), $1, i.position, i.question, i.expected_answers, i.domain, i.difficulty, i.source, i.metadata, i.source_run_id,
              CASE WHEN k.key IS NULL THEN i.source_document ELSE jsonb_set(i.source_document, '{object_key}', to_jsonb(k.key)) END,
              i.expected_fields, now()
       FROM evaluation_dataset_items i
       LEFT JOIN jsonb_to_recordset($3::jsonb) AS k(position int, key text) ON k.position = i.position
       WHERE i.dataset_id = $2`,
      { bind: [id, parent.id, JSON.stringify([...documentKeys].map(([position, key]) => ({ position, key })))], transaction },
    );
    return id;
  }

  async itemsPage(id: string, offset: number, limit: number): Promise<ItemRow[]> {
    return this.db.query<ItemRow>('SELECT * FROM evaluation_dataset_items WHERE dataset_id = $1 ORDER BY position OFFSET $2 LIMIT $3', {
      bind: [id, offset, limit],
      type: QueryTypes.SELECT,
    });
  }

  async allItems(id: string): Promise<ItemRow[]> {
    return this.db.query<ItemRow>('SELECT * FROM evaluation_dataset_items WHERE dataset_id = $1 ORDER BY position', { bind: [id], type: QueryTypes.SELECT });
  }

  /** The agents whose evaluation runs use the dataset or one of its snapshots, with their run counts. */
  async referencingRuns(id: string): Promise<{ agent_id: string; agent_name: string; run_count: number; last_run_at: Date }[]> {
    return this.db.query(
      `SELECT r.agent_id, a.name AS agent_name, count(*)::int AS run_count, max(r.created_at) AS last_run_at
       FROM evaluation_runs r JOIN agents a ON a.id = r.agent_id
       WHERE r.dataset_id = $1 OR r.dataset_id IN (SELECT id FROM evaluation_datasets WHERE parent_dataset_id = $1)
       GROUP BY r.agent_id, a.name ORDER BY max(r.created_at) DESC`,
      { bind: [id], type: QueryTypes.SELECT },
    );
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    await this.db.query('DELETE FROM evaluation_datasets WHERE id = $1', { bind: [id], transaction });
  }
}
