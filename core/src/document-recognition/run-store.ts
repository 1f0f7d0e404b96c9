import { randomUUID } from 'node:crypto';
import type { FusionDefinition } from '@agent-host/sdk';
import { QueryTypes, type Transaction } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';
import { claimLeased, recoverLeased, renewLease, type LeasedRow } from '../db/leased-row.js';
import { SqlStore } from '../db/sql-store.js';
import type { ModelBinding } from '../models/job-model.js';
import type { LocatedField } from './field-set.js';
import type { EstimatedCostSummary } from '../usage/cost.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';

/** A run's status (docs/api-decisions.md: queued → running → succeeded | failed; running → recovering → running). */
export type RecognitionStatus = 'queued' | 'running' | 'recovering' | 'succeeded' | 'failed';

/** A field's review status: `unreviewed` until a reviewer says otherwise. */
export type ReviewStatus = 'unreviewed' | 'accepted' | 'corrected' | 'rejected';

/** What a run was bound to when it was made (`runtime_binding_snapshot`): the published definition and how it runs. */
export interface BindingSnapshot {
  agent_name: string;
  definition: FusionDefinition;
  /** The file input slot the upload fills, and the `document_field_set` output slot the fields come from. */
  upload_slot: string;
  output_slot: string;
  model_binding: ModelBinding;
  recognizer_key: string;
}

export interface PreviewRecord {
  page_number: number;
  width: number;
  height: number;
  object_key: string;
}

/** Something a reviewer should know about a run: a document warning, or a field to look at first. */
export interface RecognitionIssue {
  severity: 'info' | 'warning';
  kind: 'document_warning' | 'field_missing' | 'field_not_located' | 'field_low_confidence';
  message: string;
  field_id?: string;
}

export interface RecognitionError {
  code: string;
  message: string;
  validation_errors?: string[];
}

/** What an attempt made of a run, as stored (`result_size_bytes` is a bigint, read back as a string). */
interface RecognitionArtifacts {
  pdf_object_key: string | null;
  pdf_rendition: string | null;
  page_count: number | null;
  preview_pages: PreviewRecord[];
  summary: Record<string, unknown> | null;
  issue_list: RecognitionIssue[];
  workspace_output: Record<string, unknown> | null;
  result_object_key: string | null;
  error: RecognitionError | null;
  generation_usage: TokenUsageSummary | null;
  estimated_cost: EstimatedCostSummary | null;
}

export interface RecognitionRunRow extends LeasedRow, RecognitionArtifacts {
  id: string;
  runtime_agent_id: string;
  runtime_agent_version_id: string;
  runtime_agent_type_snapshot: string;
  runtime_binding_snapshot: BindingSnapshot;
  status: RecognitionStatus;
  source_object_key: string;
  source_filename: string;
  source_content_type: string;
  source_size_bytes: string;
  source_sha256: string;
  result_size_bytes: string | null;
  trace_id: string;
  lease_token: string | null;
  last_attempt_started_at: Date | null;
  public_caller_hash: string | null;
  history_recorded: boolean;
  field_count: number;
  reviewed_field_count: number;
  heartbeat_stale?: boolean;
}

export type NewRecognitionRun = Pick<
  RecognitionRunRow,
  | 'id'
  | 'runtime_agent_id'
  | 'runtime_agent_version_id'
  | 'runtime_agent_type_snapshot'
  | 'runtime_binding_snapshot'
  | 'source_object_key'
  | 'source_filename'
  | 'source_content_type'
  | 'source_sha256'
  | 'trace_id'
  | 'public_caller_hash'
> & { source_size_bytes: number };

/** One extracted field and its current review state. */
export interface FieldRow extends LocatedField {
  run_id: string;
  current_value: unknown;
  current_review_status: ReviewStatus;
  current_reviewer_note: string | null;
  revision_count: number;
  last_revised_at: Date | null;
  last_revised_by: Record<string, unknown> | null;
}

/** One ledger entry: the field's state after an effective change, the state before it, and what changed. */
export interface RevisionRow {
  id: string;
  run_id: string;
  field_id: string;
  revision_number: number;
  value: unknown;
  review_status: ReviewStatus;
  reviewer_note: string | null;
  previous_value: unknown;
  previous_review_status: ReviewStatus;
  previous_reviewer_note: string | null;
  changed: string[];
  reviewer_identity: Record<string, unknown> | null;
  created_at: Date;
}

/** The end of an attempt: what it produced (fields only when it succeeded). */
export interface RecognitionOutcome extends RecognitionArtifacts {
  status: 'succeeded' | 'failed';
  result_size_bytes: number | null;
  fields: LocatedField[];
}

/** How far the review of a run's fields is. */
export type ReviewState = 'not_started' | 'in_progress' | 'reviewed';

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const TABLE = 'document_recognition_runs';
const REVIEW_COUNTS = `(SELECT count(*)::int FROM document_recognition_fields f WHERE f.run_id = r.id) AS field_count,
  (SELECT count(*)::int FROM document_recognition_fields f WHERE f.run_id = r.id AND f.current_review_status <> 'unreviewed') AS reviewed_field_count`;
const SELECT = (staleSeconds: number) =>
  `r.*, ${REVIEW_COUNTS}, (r.status = 'running' AND r.worker_heartbeat_at < now() - make_interval(secs => ${staleSeconds})) AS heartbeat_stale`;
// The review state of a run in SQL, as reviewState() tells it in code.
const REVIEW_STATE_SQL = `CASE
  WHEN r.status <> 'succeeded' OR NOT EXISTS (SELECT 1 FROM document_recognition_fields f WHERE f.run_id = r.id AND f.current_review_status <> 'unreviewed') THEN 'not_started'
  WHEN EXISTS (SELECT 1 FROM document_recognition_fields f WHERE f.run_id = r.id AND f.current_review_status = 'unreviewed') THEN 'in_progress'
  ELSE 'reviewed' END`;

/** A run's review state: `reviewed` once it succeeded and no field is left `unreviewed`. */
export function reviewState(run: Pick<RecognitionRunRow, 'status' | 'field_count' | 'reviewed_field_count'>): ReviewState {
  if (run.status !== 'succeeded' || run.reviewed_field_count === 0) return 'not_started';
  return run.reviewed_field_count < run.field_count ? 'in_progress' : 'reviewed';
}

/** Document-recognition runs, their fields and the append-only field-review ledger (migrations 0032, 0033). */
export class RecognitionRunStore extends SqlStore {
  constructor(
    db: SqlStore['db'],
    private readonly staleSeconds: number,
  ) {
    super(db);
  }

  /** Stores a new run: claimed at once by `owner` when it will run here now, else `queued` for the dispatcher. */
  async insert(run: NewRecognitionRun, claim: { owner: string; leaseSeconds: number } | null): Promise<RecognitionRunRow> {
    await this.db.query(
      `INSERT INTO ${TABLE} (id, runtime_agent_id, runtime_agent_version_id, runtime_agent_type_snapshot, runtime_binding_snapshot, status,
         source_object_key, source_filename, source_content_type, source_size_bytes, source_sha256, trace_id, public_caller_hash, history_recorded,
         attempt_count, lease_token, lease_owner, lease_expires_at, last_attempt_started_at, worker_heartbeat_at, started_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, true,
         CASE WHEN $14::text IS NULL THEN 0 ELSE 1 END, CASE WHEN $14::text IS NULL THEN NULL ELSE $15::uuid END, $14,
         CASE WHEN $14::text IS NULL THEN NULL ELSE now() + make_interval(secs => $16) END,
         CASE WHEN $14::text IS NULL THEN NULL ELSE now() END, CASE WHEN $14::text IS NULL THEN NULL ELSE now() END,
         CASE WHEN $14::text IS NULL THEN NULL ELSE now() END, now())`,
      {
        bind: [
          run.id,
          run.runtime_agent_id,
          run.runtime_agent_version_id,
          run.runtime_agent_type_snapshot,
          json(run.runtime_binding_snapshot),
          claim ? 'running' : 'queued',
          run.source_object_key,
          run.source_filename,
          run.source_content_type,
          run.source_size_bytes,
          run.source_sha256,
          run.trace_id,
          run.public_caller_hash,
          claim?.owner ?? null,
          randomUUID(),
          claim?.leaseSeconds ?? 0,
        ],
      },
    );
    return (await this.find(run.id))!;
  }

  async find(runId: string): Promise<RecognitionRunRow | undefined> {
    const [row] = await this.db.query<RecognitionRunRow>(`SELECT ${SELECT(this.staleSeconds)} FROM ${TABLE} r WHERE r.id = try_uuid($1)`, {
      bind: [runId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  /** Runs newest first; on the public routes only the caller's. */
  page<T>(
    filter: { callerHash?: string; runtimeAgentId?: string; status?: string; reviewState?: ReviewState },
    page: { limit: number; cursor?: string },
    present: (row: RecognitionRunRow) => T | Promise<T>,
  ) {
    const bind: unknown[] = [];
    const clauses = ['true'];
    if (filter.callerHash) clauses.push(`r.public_caller_hash = $${bind.push(filter.callerHash)}`);
    if (filter.runtimeAgentId) clauses.push(`r.runtime_agent_id = try_uuid($${bind.push(filter.runtimeAgentId)})`);
    if (filter.status) clauses.push(`r.status = $${bind.push(filter.status)}`);
    if (filter.reviewState) clauses.push(`${REVIEW_STATE_SQL} = $${bind.push(filter.reviewState)}`);
    return newestFirst<RecognitionRunRow, T>(this.db, { select: SELECT(this.staleSeconds), from: TABLE, where: clauses.join(' AND '), bind }, page, present);
  }

  claim(owner: string, leaseSeconds: number): Promise<RecognitionRunRow | undefined> {
    return claimLeased(this.db, TABLE, owner, leaseSeconds);
  }

  /** Runs whose worker stopped become `recovering`; after `maxAttempts` attempts they fail (`DOCUMENT_RECOGNITION_WORKER_LOST`). */
  recover(maxAttempts: number): Promise<void> {
    return recoverLeased(this.db, TABLE, maxAttempts, 'DOCUMENT_RECOGNITION_WORKER_LOST', 'run');
  }

  heartbeat(runId: string, leaseToken: string, leaseSeconds: number): Promise<boolean> {
    return renewLease(this.db, TABLE, runId, leaseToken, leaseSeconds, 'lease_token');
  }

  /**
   * Ends the run with the attempt's outcome and stores its fields, in one transaction; undefined (nothing written)
   * when the attempt lost the run.
   */
  async finish(runId: string, leaseToken: string, outcome: RecognitionOutcome): Promise<RecognitionRunRow | undefined> {
    const ended = await this.db.transaction(async (transaction) => {
      const rows = await this.db.query(
        `UPDATE ${TABLE} SET status = $3, pdf_object_key = $4, pdf_rendition = $5, page_count = $6, preview_pages = $7, summary = $8,
           issue_list = $9, workspace_output = $10, result_object_key = $11, result_size_bytes = $12, error = $13, generation_usage = $14,
           estimated_cost = $15, completed_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
         WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING id`,
        {
          bind: [
            runId,
            leaseToken,
            outcome.status,
            outcome.pdf_object_key,
            outcome.pdf_rendition,
            outcome.page_count,
            json(outcome.preview_pages),
            json(outcome.summary),
            json(outcome.issue_list),
            json(outcome.workspace_output),
            outcome.result_object_key,
            outcome.result_size_bytes,
            json(outcome.error),
            json(outcome.generation_usage),
            json(outcome.estimated_cost),
          ],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      if (rows.length === 0) return false;
      if (outcome.fields.length) {
        await this.db.query(
          `INSERT INTO document_recognition_fields (run_id, field_id, position, label, extracted_value, confidence, page_number, matched_text, current_value)
           SELECT $1, f.value->>'field_id', (f.value->>'position')::int, f.value->>'label', f.value->'extracted_value',
                  (f.value->>'confidence')::double precision, (f.value->>'page_number')::int, f.value->>'matched_text', f.value->'extracted_value'
           FROM jsonb_array_elements($2::jsonb) AS f`,
          { bind: [runId, JSON.stringify(outcome.fields)], transaction },
        );
      }
      return true;
    });
    return ended ? this.find(runId) : undefined;
  }

  fields(runId: string): Promise<FieldRow[]> {
    return this.db.query<FieldRow>('SELECT * FROM document_recognition_fields WHERE run_id = $1 ORDER BY position', { bind: [runId], type: QueryTypes.SELECT });
  }

  /** The field, locked until `transaction` ends: concurrent reviews of one field take turns, so none is lost. */
  async lockField(runId: string, fieldId: string, transaction: Transaction): Promise<FieldRow | undefined> {
    const [row] = await this.db.query<FieldRow>('SELECT * FROM document_recognition_fields WHERE run_id = $1 AND field_id = $2 FOR UPDATE', {
      bind: [runId, fieldId],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  /** Appends a revision and makes its state the field's current one (the caller holds the field's lock). */
  async appendRevision(
    field: FieldRow,
    next: { value: unknown; review_status: ReviewStatus; reviewer_note: string | null; changed: string[]; reviewer_identity: Record<string, unknown> | null },
    transaction: Transaction,
  ): Promise<{ field: FieldRow; revision: RevisionRow }> {
    const [revision] = await this.db.query<RevisionRow>(
      `INSERT INTO document_recognition_field_revisions (id, run_id, field_id, revision_number, value, review_status, reviewer_note, previous_value,
         previous_review_status, previous_reviewer_note, changed, reviewer_identity, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, now()) RETURNING *`,
      {
        bind: [
          randomUUID(),
          field.run_id,
          field.field_id,
          field.revision_count + 1,
          json(next.value),
          next.review_status,
          next.reviewer_note,
          json(field.current_value),
          field.current_review_status,
          field.current_reviewer_note,
          JSON.stringify(next.changed),
          json(next.reviewer_identity),
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    const [row] = await this.db.query<FieldRow>(
      `UPDATE document_recognition_fields SET current_value = $3, current_review_status = $4, current_reviewer_note = $5,
         revision_count = revision_count + 1, last_revised_at = now(), last_revised_by = $6
       WHERE run_id = $1 AND field_id = $2 RETURNING *`,
      {
        bind: [field.run_id, field.field_id, json(next.value), next.review_status, next.reviewer_note, json(next.reviewer_identity)],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return { field: row!, revision: revision! };
  }

  revisions(runId: string, fieldId: string): Promise<RevisionRow[]> {
    return this.db.query<RevisionRow>('SELECT * FROM document_recognition_field_revisions WHERE run_id = $1 AND field_id = $2 ORDER BY revision_number', {
      bind: [runId, fieldId],
      type: QueryTypes.SELECT,
    });
  }

  /** Counts by status and by review state, over every run or one runtime agent's. */
  async overview(runtimeAgentId?: string): Promise<{ status: string; review_state: ReviewState; runs: number }[]> {
    return this.db.query(
      `SELECT r.status, ${REVIEW_STATE_SQL} AS review_state, count(*)::int AS runs FROM ${TABLE} r
       WHERE $1::uuid IS NULL OR r.runtime_agent_id = $1::uuid GROUP BY 1, 2`,
      { bind: [runtimeAgentId ?? null], type: QueryTypes.SELECT },
    );
  }

  /** Runs of a runtime agent that have not ended (the agent_type change guard). */
  async openCount(agentId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${TABLE} WHERE runtime_agent_id = $1 AND status IN ('queued', 'running', 'recovering')`,
      { bind: [agentId], type: QueryTypes.SELECT },
    );
    return row?.n ?? 0;
  }
}
