import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { BadRequestError, ConflictError, NotFoundError, PayloadTooLargeError, ValidationError, type Logger } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../admin/operation.js';
import type { HostConfig } from '../config/schema.js';
import type { UploadedFile } from '../knowledge/documents.js';
import { objectKeySegment } from '../services/object-key-segment.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import { readDatasetCsv } from './csv-items.js';
import { reviewState, type FieldRow, type RecognitionRunRow } from '../document-recognition/run-store.js';
import { DatasetStore, type DatasetRow, type ItemRow, type RecognitionItemInput, type TaskType } from './dataset-store.js';

const SOURCE = 'core.evaluation';

/** Where reviewed document-recognition runs are read from, for an import. */
export interface ReviewedRunSource {
  forImport(runIds: string[]): Promise<{ run: RecognitionRunRow; fields: FieldRow[] }[]>;
}

/**
 * Evaluation datasets (spec 4.9): made, filled from a CSV (which is kept as it was uploaded), frozen into immutable
 * snapshots that runs use, listed, read and deleted while nothing references them.
 */
export class EvaluationDatasets {
  private readonly store: DatasetStore;

  constructor(
    private readonly db: Sequelize,
    private readonly config: HostConfig['evaluation'],
    private readonly objectStore: StreamingObjectStore,
    private readonly reviewedRuns: ReviewedRunSource,
    private readonly logger: Logger,
  ) {
    this.store = new DatasetStore(db);
  }

  /** Every item of a dataset, in CSV order (a run reads its frozen snapshot's). */
  allItems(id: string): Promise<ItemRow[]> {
    return this.store.allItems(id);
  }

  get csvMaxBytes(): number {
    return this.config.csv_max_bytes;
  }

  async create(input: { name: string; description?: string; task_type: TaskType }, op: Operation) {
    const id = await this.db.transaction(async (transaction) => {
      const created = await this.store.insert({ ...input, description: input.description ?? '' }, op.operator.admin_user_id, transaction);
      await auditOperation(
        this.db,
        SOURCE,
        op,
        {
          action: 'evaluation_dataset.create',
          target_type: 'evaluation_dataset',
          target_id: created,
          payload: { name: input.name, task_type: input.task_type },
        },
        transaction,
      );
      return created;
    });
    return this.get(id);
  }

  list(filters: { task_type?: TaskType; frozen?: boolean }, page: { limit: number; cursor?: string }) {
    return this.store.page(filters, page, (row) => this.present(row));
  }

  async get(id: string) {
    return this.present(await this.require(id));
  }

  /**
   * Replaces the items of an unfrozen QA dataset with the rows of a CSV and keeps the file as its source CSV. A file
   * with any bad row changes nothing (422 naming the row and column).
   */
  async import(id: string, file: UploadedFile, op: Operation) {
    const bytes = file.data instanceof Uint8Array ? file.data : await readFile(file.data.path);
    if (bytes.byteLength > this.config.csv_max_bytes) {
      throw new PayloadTooLargeError(`the CSV is larger than ${this.config.csv_max_bytes} bytes ([evaluation] csv_max_bytes)`, { code: 'UPLOAD_TOO_LARGE' });
    }
    const dataset = await this.require(id);
    this.requireEditable(dataset);
    if (dataset.task_type !== 'qa') {
      throw new ConflictError(`a ${dataset.task_type} dataset is filled from reviewed document-recognition runs, not from a CSV`, {
        code: 'EVALUATION_DATASET_TASK_TYPE',
      });
    }
    const items = readDatasetCsv(bytes, this.config.csv_max_rows);
    const key = `evaluation/${id}/${randomUUID()}/${objectKeySegment(file.filename, 'dataset.csv')}`;
    await this.objectStore.put(key, bytes, { contentType: file.contentType });
    const csv = { object_key: key, filename: file.filename, content_type: file.contentType, size_bytes: bytes.byteLength };
    let replaced: string | null = null;
    try {
      await this.db.transaction(async (transaction) => {
        const locked = await this.store.find(id, transaction, true);
        if (!locked) throw notFound(id);
        this.requireEditable(locked);
        replaced = locked.source_csv_object_key;
        await this.store.replaceItems(id, items, csv, transaction);
        await auditOperation(
          this.db,
          SOURCE,
          op,
          {
            action: 'evaluation_dataset.import',
            target_type: 'evaluation_dataset',
            target_id: id,
            payload: { filename: file.filename, size_bytes: bytes.byteLength, item_count: items.length },
          },
          transaction,
        );
      });
    } catch (error) {
      await this.removeObject(key);
      throw error;
    }
    if (replaced) await this.removeObject(replaced);
    return this.get(id);
  }

  /**
   * Adds one item per reviewed document-recognition run to an unfrozen `document_recognition` dataset (spec 4.9): the
   * run's source document, and as expected output the reviewed value of each field accepted or corrected (a rejected
   * field has no right value to expect, so it is left out). A run that has not succeeded or has unreviewed fields
   * (409), one already in the dataset (409), or an unknown one (422) refuses the whole import.
   */
  async importRecognitionRuns(id: string, runIds: string[], op: Operation) {
    const dataset = await this.require(id);
    this.requireEditable(dataset);
    if (dataset.task_type !== 'document_recognition') {
      throw new ConflictError(`a ${dataset.task_type} dataset takes no document-recognition runs`, { code: 'EVALUATION_DATASET_TASK_TYPE' });
    }
    const repeated = runIds.findIndex((runId, index) => runIds.indexOf(runId) !== index);
    if (repeated >= 0) throw new ValidationError([{ loc: ['body', 'run_id_list', repeated], msg: `${runIds[repeated]} is listed twice`, type: 'value_error' }]);
    const runs = await this.reviewedRuns.forImport(runIds).catch((error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
      throw new ValidationError([{ loc: ['body', 'run_id_list'], msg: (error as Error).message, type: 'value_error' }]);
    });
    const unreviewed = runs.filter(({ run }) => reviewState(run) !== 'reviewed').map(({ run }) => run.id);
    if (unreviewed.length) {
      throw new ConflictError(`not reviewed (succeeded, every field reviewed): ${unreviewed.join(', ')}`, { code: 'DOCUMENT_RECOGNITION_RUN_NOT_REVIEWED' });
    }
    const items: RecognitionItemInput[] = runs.map(({ run, fields }) => ({
      question: run.source_filename,
      expected_answers: [],
      domain: run.runtime_binding_snapshot.agent_name,
      difficulty: run.page_count === null ? null : `${run.page_count} page(s)`,
      source: run.source_content_type,
      metadata: {
        runtime_agent_id: run.runtime_agent_id,
        runtime_agent_version_id: run.runtime_agent_version_id,
        rejected_field_ids: fields.filter((f) => f.current_review_status === 'rejected').map((f) => f.field_id),
      },
      source_run_id: run.id,
      source_document: {
        object_key: run.source_object_key,
        filename: run.source_filename,
        content_type: run.source_content_type,
        size_bytes: Number(run.source_size_bytes),
        sha256: run.source_sha256,
      },
      expected_fields: Object.fromEntries(fields.filter((f) => f.current_review_status !== 'rejected').map((f) => [f.field_id, f.current_value])),
    }));
    await this.db.transaction(async (transaction) => {
      const locked = await this.store.find(id, transaction, true);
      if (!locked) throw notFound(id);
      this.requireEditable(locked);
      const present = await this.store.sourceRunIds(id, transaction);
      const again = runIds.filter((runId) => present.has(runId));
      if (again.length)
        throw new ConflictError(`the dataset holds items of these runs already: ${again.join(', ')}`, { code: 'EVALUATION_ITEM_DUPLICATE_RUN' });
      await this.store.appendRecognitionItems(id, items, transaction);
      await auditOperation(
        this.db,
        SOURCE,
        op,
        { action: 'evaluation_dataset.import_document_recognition_runs', target_type: 'evaluation_dataset', target_id: id, payload: { run_ids: runIds } },
        transaction,
      );
    });
    return this.get(id);
  }

  /**
   * An immutable snapshot of the dataset: a frozen child dataset with copies of the items and of the source CSV.
   * 400 when the dataset has items but no source CSV (nothing to copy), or no items at all.
   */
  async freeze(id: string, op: Operation) {
    const dataset = await this.require(id);
    if (dataset.frozen) throw new ConflictError(`dataset ${id} is a frozen snapshot already`, { code: 'EVALUATION_DATASET_FROZEN' });
    if (dataset.item_count === 0) {
      const how = dataset.task_type === 'qa' ? 'import a CSV' : 'import reviewed document-recognition runs';
      throw new BadRequestError(`dataset ${id} has no items to freeze; ${how} first`, { code: 'EVALUATION_DATASET_EMPTY' });
    }
    if (dataset.task_type === 'qa' && !dataset.source_csv_object_key) {
      throw new BadRequestError(`dataset ${id} has items but no persisted source CSV to copy; import its CSV again`, {
        code: 'EVALUATION_DATASET_NO_SOURCE_CSV',
      });
    }
    const snapshotDir = `evaluation/${id}/snapshots/${randomUUID()}`;
    const copyKey = dataset.source_csv_object_key && `${snapshotDir}/${objectKeySegment(dataset.source_csv_filename ?? '', 'dataset.csv')}`;
    const copies: string[] = [];
    const copy = async (from: string, to: string, contentType: string) => {
      const { body, info } = await this.objectStore.open(from);
      await this.objectStore.putStream(to, body, { contentType, size: info.size });
      copies.push(to);
    };
    // A document_recognition snapshot keeps its own copy of each item's document: the runs' files may go, the snapshot stays.
    const documentKeys = new Map<number, string>();
    try {
      if (copyKey) await copy(dataset.source_csv_object_key!, copyKey, dataset.source_csv_content_type!);
      for (const item of dataset.task_type === 'document_recognition' ? await this.store.allItems(id) : []) {
        const document = item.source_document!;
        const key = `${snapshotDir}/documents/${item.position}-${objectKeySegment(document.filename, 'document')}`;
        await copy(document.object_key, key, document.content_type);
        documentKeys.set(item.position, key);
      }
      const snapshotId = await this.db.transaction(async (transaction) => {
        // The parent is locked so an import cannot change its items while they are copied.
        const locked = await this.store.find(id, transaction, true);
        if (!locked) throw notFound(id);
        const created = await this.store.insertSnapshot(locked, copyKey, op.operator.admin_user_id, transaction, documentKeys);
        await auditOperation(
          this.db,
          SOURCE,
          op,
          {
            action: 'evaluation_dataset.freeze',
            target_type: 'evaluation_dataset',
            target_id: created,
            payload: { parent_dataset_id: id, item_count: locked.item_count },
          },
          transaction,
        );
        return created;
      });
      return await this.get(snapshotId);
    } catch (error) {
      await Promise.all(copies.map((key) => this.removeObject(key)));
      throw error;
    }
  }

  async items(id: string, page: { offset: number; limit: number }) {
    const dataset = await this.require(id);
    const rows = await this.store.itemsPage(id, page.offset, page.limit);
    return { items: rows.map(presentItem), total: dataset.item_count, offset: page.offset, limit: page.limit };
  }

  /** The source CSV's bytes, for the same-origin download route. */
  async openSourceCsv(id: string) {
    const dataset = await this.require(id);
    if (!dataset.source_csv_object_key) throw new NotFoundError(`dataset ${id} has no source CSV`, { code: 'EVALUATION_SOURCE_CSV_NOT_FOUND' });
    const { body, info } = await this.objectStore.open(dataset.source_csv_object_key);
    return { body, size: info.size, filename: dataset.source_csv_filename ?? 'dataset.csv', contentType: dataset.source_csv_content_type! };
  }

  /** Deletes a dataset and its stored CSV; refused (409) while evaluation runs or frozen snapshots reference it. */
  async delete(id: string, op: Operation) {
    const dataset = await this.require(id);
    const agents = await this.store.referencingRuns(id);
    const runCount = agents.reduce((n, a) => n + a.run_count, 0);
    if (dataset.snapshot_count > 0 || runCount > 0) {
      throw new ConflictError(
        {
          code: 'DATASET_REFERENCED_BY_EVALUATION_RUNS',
          message: `dataset ${id} is referenced by ${runCount} evaluation run(s) and ${dataset.snapshot_count} frozen snapshot(s)`,
          evaluation_run_count: runCount,
          snapshot_count: dataset.snapshot_count,
          referencing_agents: agents.map((a) => ({ ...a, last_run_at: a.last_run_at.toISOString() })),
        },
        { code: 'DATASET_REFERENCED_BY_EVALUATION_RUNS' },
      );
    }
    const documents = dataset.frozen ? (await this.store.allItems(id)).flatMap((item) => (item.source_document ? [item.source_document.object_key] : [])) : [];
    await this.db.transaction(async (transaction) => {
      await this.store.delete(id, transaction);
      await auditOperation(
        this.db,
        SOURCE,
        op,
        { action: 'evaluation_dataset.delete', target_type: 'evaluation_dataset', target_id: id, payload: { name: dataset.name } },
        transaction,
      );
    });
    if (dataset.source_csv_object_key) await this.removeObject(dataset.source_csv_object_key);
    // A snapshot's documents are its own copies; an unfrozen dataset's are the runs' files, which stay.
    if (dataset.frozen) for (const key of documents) await this.removeObject(key);
    return { status: 'deleted' as const, dataset_id: id };
  }

  /** The dataset's row, for a run to be made on it. */
  async require(id: string): Promise<DatasetRow> {
    const row = await this.store.find(id);
    if (!row) throw notFound(id);
    return row;
  }

  private requireEditable(dataset: DatasetRow): void {
    if (dataset.frozen) throw new ConflictError(`dataset ${dataset.id} is a frozen snapshot and never changes`, { code: 'EVALUATION_DATASET_FROZEN' });
  }

  private async removeObject(key: string): Promise<void> {
    await this.objectStore.delete(key).catch((error: unknown) => this.logger.warn({ err: error, key }, 'could not remove a stored dataset file'));
  }

  /** The dataset as the API shows it; a source CSV without a presigned URL is served by the dataset's own route. */
  private async present(row: DatasetRow) {
    const download = row.source_csv_object_key ? await this.objectStore.describeDownload(row.source_csv_object_key) : null;
    return {
      dataset_id: row.id,
      name: row.name,
      description: row.description,
      task_type: row.task_type,
      frozen: row.frozen,
      parent_dataset_id: row.parent_dataset_id,
      frozen_at: row.frozen_at?.toISOString() ?? null,
      item_count: row.item_count,
      snapshot_count: row.snapshot_count,
      source_csv_filename: row.source_csv_filename,
      source_csv_content_type: row.source_csv_content_type,
      source_csv_size_bytes: row.source_csv_size_bytes === null ? null : Number(row.source_csv_size_bytes),
      source_csv_uploaded_at: row.source_csv_uploaded_at?.toISOString() ?? null,
      source_csv_download_url:
        download && (download.download_mode === 'object_store_proxy' ? `/evaluation-datasets/${row.id}/source-csv` : download.download_url),
      source_csv_download_mode: download?.download_mode ?? null,
      source_csv_download_warning: download?.download_warning ?? null,
      created_by: row.created_by,
      created_at: row.created_at.toISOString(),
      updated_at: row.updated_at.toISOString(),
    };
  }
}

const notFound = (id: string) => new NotFoundError(`no evaluation dataset ${id}`, { code: 'EVALUATION_DATASET_NOT_FOUND' });

function presentItem(row: ItemRow) {
  return {
    item_id: row.id,
    position: row.position,
    question: row.question,
    expected_answers: row.expected_answers,
    domain: row.domain,
    difficulty: row.difficulty,
    source: row.source,
    metadata: row.metadata,
    source_run_id: row.source_run_id,
    source_document: row.source_document && {
      filename: row.source_document.filename,
      content_type: row.source_document.content_type,
      size_bytes: row.source_document.size_bytes,
      sha256: row.source_document.sha256,
    },
    expected_fields: row.expected_fields,
  };
}
