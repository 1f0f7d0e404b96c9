import { randomUUID } from 'node:crypto';
import type { EtlPlan, EtlTargetColumn } from '@agent-host/sdk';
import { QueryTypes } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';
import { claimLeased, recoverLeased, renewLease, type LeasedRow } from '../db/leased-row.js';
import { SqlStore } from '../db/sql-store.js';
import type { ModelBinding } from '../models/job-model.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';

/** A job's status (docs/api-decisions.md: queued → running → succeeded | failed; running → recovering → running). */
export type EtlJobStatus = 'queued' | 'running' | 'recovering' | 'succeeded' | 'failed';

/** What a job's report holds: the plan's outcome, the counts, and the first cells with issues. */
export interface EtlReport {
  rows_total: number;
  rows_written: number;
  rows_rejected: number;
  cells_coerced: number;
  cells_rejected: number;
  issues: { row: number; column: string; kind: 'coerced' | 'rejected'; reason: string }[];
  issues_not_listed: number;
}

export interface EtlJobRow extends LeasedRow {
  id: string;
  agent_id: string;
  channel: 'admin' | 'public';
  status: EtlJobStatus;
  runtime_key: string;
  instructions: string | null;
  model_binding: ModelBinding;
  source_object_key: string;
  source_filename: string;
  source_size_bytes: string | number;
  source_columns: string[];
  sample_rows: string[][];
  target_schema_object_key: string;
  target_schema_filename: string;
  target_schema_size_bytes: string | number;
  target_schema: EtlTargetColumn[];
  plan: EtlPlan | null;
  output_object_key: string | null;
  output_size_bytes: string | number | null;
  report: EtlReport | null;
  rows_total: number;
  rows_done: number;
  error: { code: string; message: string } | null;
  generation_usage: TokenUsageSummary | null;
  lease_token: string | null;
  last_attempt_started_at: Date | null;
  created_by: string | null;
  public_caller_hash: string | null;
  heartbeat_stale?: boolean;
}

export type NewJob = Pick<
  EtlJobRow,
  | 'agent_id'
  | 'channel'
  | 'runtime_key'
  | 'instructions'
  | 'model_binding'
  | 'source_object_key'
  | 'source_filename'
  | 'source_size_bytes'
  | 'source_columns'
  | 'sample_rows'
  | 'target_schema_object_key'
  | 'target_schema_filename'
  | 'target_schema_size_bytes'
  | 'target_schema'
  | 'rows_total'
  | 'created_by'
  | 'public_caller_hash'
> & { id: string };

/** How an attempt ended the job. */
export type JobOutcome =
  | { status: 'succeeded'; output_object_key: string; output_size_bytes: number; report: EtlReport }
  | { status: 'failed'; error: { code: string; message: string }; report: EtlReport | null };

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const SELECT = (staleSeconds: number) =>
  `r.*, (r.status = 'running' AND r.worker_heartbeat_at < now() - make_interval(secs => ${staleSeconds})) AS heartbeat_stale`;
// The statements that only the attempt holding the lease may run.
const HELD = "id = $1 AND lease_token = $2 AND status = 'running'";

/** ETL jobs (migration 0031). Every attempt holds a fresh `lease_token`; only its holder may change or end the job. */
export class EtlJobStore extends SqlStore {
  constructor(
    db: SqlStore['db'],
    private readonly staleSeconds: number,
  ) {
    super(db);
  }

  /** Stores a new job: claimed at once by `claim.owner` when it will run here now, else `queued`. */
  async insert(job: NewJob, claim: { owner: string; leaseSeconds: number } | null): Promise<EtlJobRow> {
    const columns = Object.keys(job) as (keyof NewJob)[];
    const values = columns.map((c) => (['model_binding', 'source_columns', 'sample_rows', 'target_schema'].includes(c) ? json(job[c]) : job[c]));
    const n = values.length;
    const [row] = await this.db.query<EtlJobRow>(
      `INSERT INTO etl_jobs (${columns.join(', ')}, status, attempt_count, lease_token, lease_owner, lease_expires_at, last_attempt_started_at,
         worker_heartbeat_at, started_at, created_at)
       VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')}, CASE WHEN $${n + 1}::text IS NULL THEN 'queued' ELSE 'running' END,
         CASE WHEN $${n + 1}::text IS NULL THEN 0 ELSE 1 END, CASE WHEN $${n + 1}::text IS NULL THEN NULL ELSE $${n + 2}::uuid END, $${n + 1},
         CASE WHEN $${n + 1}::text IS NULL THEN NULL ELSE now() + make_interval(secs => $${n + 3}) END,
         CASE WHEN $${n + 1}::text IS NULL THEN NULL ELSE now() END, CASE WHEN $${n + 1}::text IS NULL THEN NULL ELSE now() END,
         CASE WHEN $${n + 1}::text IS NULL THEN NULL ELSE now() END, now())
       RETURNING *`,
      { bind: [...values, claim?.owner ?? null, randomUUID(), claim?.leaseSeconds ?? 0], type: QueryTypes.SELECT },
    );
    return row!;
  }

  async find(agentId: string, jobId: string): Promise<EtlJobRow | undefined> {
    const [row] = await this.db.query<EtlJobRow>(
      `SELECT ${SELECT(this.staleSeconds)} FROM etl_jobs r WHERE r.id = try_uuid($1) AND r.agent_id = try_uuid($2)`,
      {
        bind: [jobId, agentId],
        type: QueryTypes.SELECT,
      },
    );
    return row;
  }

  /** Jobs of an agent, newest first; on the public routes only those of one caller. */
  page(agentId: string, filter: { callerHash?: string; status?: string }, page: { limit: number; cursor?: string }) {
    const bind: unknown[] = [agentId];
    const clauses = ['r.agent_id = $1'];
    if (filter.callerHash) clauses.push(`r.public_caller_hash = $${bind.push(filter.callerHash)}`);
    if (filter.status) clauses.push(`r.status = $${bind.push(filter.status)}`);
    return newestFirst<EtlJobRow, EtlJobRow>(
      this.db,
      { select: SELECT(this.staleSeconds), from: 'etl_jobs', where: clauses.join(' AND '), bind },
      page,
      (row) => row,
    );
  }

  claim(owner: string, leaseSeconds: number): Promise<EtlJobRow | undefined> {
    return claimLeased(this.db, 'etl_jobs', owner, leaseSeconds, 'rows_done = 0');
  }

  /** Jobs whose worker stopped become `recovering`; after `maxAttempts` attempts they fail (`ETL_WORKER_LOST`). */
  recover(maxAttempts: number): Promise<void> {
    return recoverLeased(this.db, 'etl_jobs', maxAttempts, 'ETL_WORKER_LOST', 'job');
  }

  heartbeat(jobId: string, leaseToken: string, leaseSeconds: number): Promise<boolean> {
    return renewLease(this.db, 'etl_jobs', jobId, leaseToken, leaseSeconds, 'lease_token');
  }

  /** Keeps the plan the attempt made (and what planning used); false when the attempt lost the job. */
  async savePlan(jobId: string, leaseToken: string, plan: EtlPlan, usage: TokenUsageSummary): Promise<boolean> {
    const rows = await this.db.query(`UPDATE etl_jobs SET plan = $3, generation_usage = $4 WHERE ${HELD} RETURNING id`, {
      bind: [jobId, leaseToken, json(plan), json(usage)],
      type: QueryTypes.SELECT,
    });
    return rows.length > 0;
  }

  async progress(jobId: string, leaseToken: string, rowsDone: number): Promise<void> {
    await this.db.query(`UPDATE etl_jobs SET rows_done = $3 WHERE ${HELD}`, { bind: [jobId, leaseToken, rowsDone] });
  }

  /** Ends the job with the attempt's outcome and answers it; undefined (nothing written) when the attempt lost the job. */
  async finish(jobId: string, leaseToken: string, outcome: JobOutcome): Promise<EtlJobRow | undefined> {
    const succeeded = outcome.status === 'succeeded';
    const [row] = await this.db.query<EtlJobRow>(
      `UPDATE etl_jobs SET status = $3::text, output_object_key = $4, output_size_bytes = $5, report = $6, error = $7,
         rows_done = CASE WHEN $3::text = 'succeeded' THEN rows_total ELSE rows_done END,
         completed_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
       WHERE ${HELD} RETURNING *`,
      {
        bind: [
          jobId,
          leaseToken,
          outcome.status,
          succeeded ? outcome.output_object_key : null,
          succeeded ? outcome.output_size_bytes : null,
          json(outcome.report),
          succeeded ? null : json(outcome.error),
        ],
        type: QueryTypes.SELECT,
      },
    );
    return row;
  }

  /** Jobs of the agent that have not ended (the agent_type change guard). */
  async openCount(agentId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM etl_jobs WHERE agent_id = $1 AND status IN ('queued', 'running', 'recovering')",
      { bind: [agentId], type: QueryTypes.SELECT },
    );
    return row?.n ?? 0;
  }

  /** Deletes a job that is not running, answering it (for its files); undefined when there is none to delete. */
  async delete(agentId: string, jobId: string): Promise<EtlJobRow | undefined> {
    const [row] = await this.db.query<EtlJobRow>("DELETE FROM etl_jobs WHERE id = try_uuid($1) AND agent_id = $2 AND status <> 'running' RETURNING *", {
      bind: [jobId, agentId],
      type: QueryTypes.SELECT,
    });
    return row;
  }
}
