import { randomUUID } from 'node:crypto';
import type { FusionDefinition, FusionOutputItem } from '@agent-host/sdk';
import { QueryTypes } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';
import { claimLeased, recoverLeased, renewLease, type LeasedRow } from '../db/leased-row.js';
import { SqlStore } from '../db/sql-store.js';
import type { ModelBinding } from '../models/job-model.js';
import type { EstimatedCostSummary } from '../usage/cost.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';

/** A run's status (docs/api-decisions.md: queued → running → succeeded | failed; running → recovering → running). */
export type FusionRunStatus = 'queued' | 'running' | 'recovering' | 'succeeded' | 'failed';

/** One stored input: a text, or a file kept in the object store. */
export type StoredInput =
  | { input_id: string; slot: string; kind: 'text'; text: string }
  | { input_id: string; slot: string; kind: 'file'; filename: string; content_type: string; size_bytes: number; sha256: string; object_key: string };

/** Why a run failed: a code, a message, and for `FUSION_OUTPUT_INVALID` the schema errors of the last attempt. */
export interface RunError {
  code: 'FUSION_OUTPUT_INVALID' | 'FUSION_RUNTIME_FAILED' | 'FUSION_RUNTIME_MISSING' | 'FUSION_WORKER_LOST';
  message: string;
  validation_errors?: string[];
}

export interface FusionRunRow extends LeasedRow {
  id: string;
  agent_id: string;
  agent_version_id: string | null;
  channel: 'admin' | 'public';
  status: FusionRunStatus;
  definition: FusionDefinition;
  model_binding: ModelBinding;
  inputs: StoredInput[];
  output_item_list: FusionOutputItem[] | null;
  error: RunError | null;
  governance_context: Record<string, unknown> | null;
  trace_id: string;
  generation_usage: TokenUsageSummary | null;
  estimated_cost: EstimatedCostSummary | null;
  lease_token: string | null;
  last_attempt_started_at: Date | null;
  created_by: string | null;
  authenticated_agent_api_key_id: string | null;
  public_caller_hash: string | null;
  heartbeat_stale?: boolean;
}

export type NewRun = Pick<
  FusionRunRow,
  | 'agent_id'
  | 'agent_version_id'
  | 'channel'
  | 'definition'
  | 'model_binding'
  | 'inputs'
  | 'trace_id'
  | 'created_by'
  | 'authenticated_agent_api_key_id'
  | 'public_caller_hash'
>;

/** The end of an attempt: what it produced. */
export interface RunOutcome {
  status: 'succeeded' | 'failed';
  output_item_list: FusionOutputItem[] | null;
  error: RunError | null;
  governance_context: Record<string, unknown>;
  generation_usage: TokenUsageSummary;
  estimated_cost: EstimatedCostSummary;
}

/** Who may read a run on the public routes: the key that made it, or the anonymous caller's token hash. */
export type PublicOwner = { api_key_id: string } | { caller_hash: string };

const json = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));
const SELECT = (staleSeconds: number) =>
  `r.*, (r.status = 'running' AND r.worker_heartbeat_at < now() - make_interval(secs => ${staleSeconds})) AS heartbeat_stale`;

/** Fusion runs (migration 0030). Every attempt holds a fresh `lease_token`; only its holder may end the run. */
export class FusionRunStore extends SqlStore {
  constructor(
    db: SqlStore['db'],
    private readonly staleSeconds: number,
  ) {
    super(db);
  }

  /**
   * Stores a new run: claimed at once by `owner` (status `running`, attempt 1, a new lease token) when it will run
   * here now, else `queued` for the dispatcher.
   */
  async insert(run: NewRun, claim: { owner: string; leaseSeconds: number } | null): Promise<FusionRunRow> {
    const [row] = await this.db.query<FusionRunRow>(
      `INSERT INTO fusion_runs (id, agent_id, agent_version_id, channel, status, definition, model_binding, inputs, trace_id, created_by,
         authenticated_agent_api_key_id, public_caller_hash, attempt_count, lease_token, lease_owner, lease_expires_at, last_attempt_started_at,
         worker_heartbeat_at, started_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
         CASE WHEN $13::text IS NULL THEN 0 ELSE 1 END, CASE WHEN $13::text IS NULL THEN NULL ELSE $14::uuid END, $13,
         CASE WHEN $13::text IS NULL THEN NULL ELSE now() + make_interval(secs => $15) END,
         CASE WHEN $13::text IS NULL THEN NULL ELSE now() END, CASE WHEN $13::text IS NULL THEN NULL ELSE now() END,
         CASE WHEN $13::text IS NULL THEN NULL ELSE now() END, now())
       RETURNING *`,
      {
        bind: [
          randomUUID(),
          run.agent_id,
          run.agent_version_id,
          run.channel,
          claim ? 'running' : 'queued',
          json(run.definition),
          json(run.model_binding),
          json(run.inputs),
          run.trace_id,
          run.created_by,
          run.authenticated_agent_api_key_id,
          run.public_caller_hash,
          claim?.owner ?? null,
          randomUUID(),
          claim?.leaseSeconds ?? 0,
        ],
        type: QueryTypes.SELECT,
      },
    );
    return row!;
  }

  async find(agentId: string, runId: string): Promise<FusionRunRow | undefined> {
    const [row] = await this.db.query<FusionRunRow>(
      `SELECT ${SELECT(this.staleSeconds)} FROM fusion_runs r WHERE r.id = try_uuid($1) AND r.agent_id = try_uuid($2)`,
      { bind: [runId, agentId], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** Runs of an agent, newest first; on the public routes only the owner's runs of one version. */
  page(agentId: string, filter: { owner?: PublicOwner; versionId?: string; status?: string }, page: { limit: number; cursor?: string }) {
    const bind: unknown[] = [agentId];
    const clauses = ['r.agent_id = $1'];
    if (filter.owner && 'api_key_id' in filter.owner) clauses.push(`r.authenticated_agent_api_key_id = $${bind.push(filter.owner.api_key_id)}`);
    if (filter.owner && 'caller_hash' in filter.owner) clauses.push(`r.public_caller_hash = $${bind.push(filter.owner.caller_hash)}`);
    if (filter.versionId) clauses.push(`r.agent_version_id = $${bind.push(filter.versionId)}`);
    if (filter.status) clauses.push(`r.status = $${bind.push(filter.status)}`);
    return newestFirst<FusionRunRow, FusionRunRow>(
      this.db,
      { select: SELECT(this.staleSeconds), from: 'fusion_runs', where: clauses.join(' AND '), bind },
      page,
      (row) => row,
    );
  }

  claim(owner: string, leaseSeconds: number): Promise<FusionRunRow | undefined> {
    return claimLeased(this.db, 'fusion_runs', owner, leaseSeconds);
  }

  /** Runs whose worker stopped become `recovering`; after `maxAttempts` attempts they fail (`FUSION_WORKER_LOST`). */
  recover(maxAttempts: number): Promise<void> {
    return recoverLeased(this.db, 'fusion_runs', maxAttempts, 'FUSION_WORKER_LOST', 'run');
  }

  /** Renews the attempt's lease; false when the attempt no longer holds the run (recovered elsewhere, or ended). */
  heartbeat(runId: string, leaseToken: string, leaseSeconds: number): Promise<boolean> {
    return renewLease(this.db, 'fusion_runs', runId, leaseToken, leaseSeconds, 'lease_token');
  }

  /** Ends the run with the attempt's outcome and answers the ended run; undefined (nothing written) when the attempt lost the run. */
  async finish(runId: string, leaseToken: string, outcome: RunOutcome): Promise<FusionRunRow | undefined> {
    const [row] = await this.db.query<FusionRunRow>(
      `UPDATE fusion_runs SET status = $3, output_item_list = $4, error = $5, governance_context = $6, generation_usage = $7, estimated_cost = $8,
         completed_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL
       WHERE id = $1 AND lease_token = $2 AND status = 'running' RETURNING *`,
      {
        bind: [
          runId,
          leaseToken,
          outcome.status,
          json(outcome.output_item_list),
          json(outcome.error),
          json(outcome.governance_context),
          json(outcome.generation_usage),
          json(outcome.estimated_cost),
        ],
        type: QueryTypes.SELECT,
      },
    );
    return row;
  }

  /** Runs that have not ended, of an agent (the agent_type change guard). */
  async openCount(agentId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM fusion_runs WHERE agent_id = $1 AND status IN ('queued', 'running', 'recovering')",
      { bind: [agentId], type: QueryTypes.SELECT },
    );
    return row?.n ?? 0;
  }
}
