import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';
import { renewLease, type LeasedRow } from '../db/leased-row.js';
import { bindableJson, preparedQuery } from '../db/prepared-query.js';
import type { FieldScore } from './field-score.js';
import { SqlStore } from '../db/sql-store.js';
import type { EstimatedCostSummary } from '../usage/cost.js';
import { rollupUsage, type TokenUsageRollup, type TokenUsageSummary } from '../usage/token-usage.js';
import type { JudgeScore, JudgeStatus } from './judge.js';
import type { RuleScore } from './rule-score.js';

/** A run's stored status; `heartbeat_expired` is derived from a `running` run whose lease lapsed (spec 3.4). */
export type RunStatus = 'queued' | 'running' | 'recovering' | 'completed' | 'failed';

export interface RunRow extends LeasedRow {
  id: string;
  agent_id: string;
  dataset_id: string;
  status: RunStatus;
  orchestrator_key: string;
  model_name: string | null;
  model_provider: string | null;
  model_temperature: number | null;
  model_routing_config: Record<string, unknown> | null;
  judge_prompt: string;
  judge_prompt_version: string;
  item_count: number;
  error_message: string | null;
  created_by: string | null;
}

/** A run with what its results add up to, for the API. */
export interface RunWithTotals extends RunRow {
  lease_lapsed: boolean;
  heartbeat_stale: boolean;
  items_completed: number;
  items_failed: number;
  exact_match_rate: number | null;
  mean_token_f1: number | null;
  pass_rate: number | null;
  mean_judge_score: number | null;
  judged_count: number;
  invalid_judge_count: number;
  generation_usage_rollup: TokenUsageRollup;
  judge_usage_rollup: TokenUsageRollup;
}

export interface ResultInput {
  run_id: string;
  item_id: string;
  position: number;
  question: string;
  expected_answers: string[];
  domain: string | null;
  difficulty: string | null;
  source: string | null;
  predicted_answer: string | null;
  response_source: string | null;
  status: 'succeeded' | 'failed';
  error_message: string | null;
  rule_score: RuleScore | null;
  judge_status: JudgeStatus | 'failed' | 'skipped';
  judge_score: JudgeScore | null;
  /** For an agent with a grounding policy: the path its answer took (issue 20). */
  grounding: { path: string; grounded: boolean; cited_ids: string[] } | null;
  /** For a `document_recognition` item: each field's extracted value against its reviewed one. */
  field_scores?: FieldScore[] | null;
  generation_usage: TokenUsageSummary;
  judge_usage: TokenUsageSummary;
  generation_cost: EstimatedCostSummary;
  judge_cost: EstimatedCostSummary;
  latency_ms: number;
}

export type ResultRow = Omit<ResultInput, 'generation_usage' | 'judge_usage'> & {
  id: string;
  generation_input_tokens: number;
  generation_output_tokens: number;
  generation_total_tokens: number;
  generation_usage_source: TokenUsageSummary['token_usage_source'];
  judge_input_tokens: number;
  judge_output_tokens: number;
  judge_total_tokens: number;
  judge_usage_source: TokenUsageSummary['token_usage_source'];
  created_at: Date;
};

/** The item fields results are sliced by (spec 4.9). */
export const SLICE_COLUMNS = ['domain', 'difficulty', 'source'] as const;
export type SliceColumn = (typeof SLICE_COLUMNS)[number];

export interface SliceRow {
  value: string | null;
  item_count: number;
  failed_count: number;
  exact_match_rate: number | null;
  mean_token_f1: number | null;
  pass_rate: number | null;
  mean_judge_score: number | null;
}

/** Per run, answer or judgement, and usage source: the sums a rollup is made of. */
export interface UsageGroup {
  run_id: string;
  kind: 'generation' | 'judge';
  source: TokenUsageSummary['token_usage_source'];
  input_tokens: string;
  output_tokens: string;
  interactions: string;
}

/** The evaluation results' tokens of some runs, or of every run of an agent, grouped as {@link UsageGroup}s. */
export function evaluationUsage(db: SqlStore['db'], filter: { runIds: string[] } | { agentId: string }): Promise<UsageGroup[]> {
  const [where, bind] = 'runIds' in filter ? ['x.run_id = ANY($1::uuid[])', filter.runIds] : ['r.agent_id = $1', filter.agentId];
  return db.query<UsageGroup>(
    `SELECT x.run_id, 'generation' AS kind, x.generation_usage_source AS source, sum(x.generation_input_tokens) AS input_tokens,
            sum(x.generation_output_tokens) AS output_tokens, count(*) AS interactions
     FROM evaluation_results x JOIN evaluation_runs r ON r.id = x.run_id WHERE ${where} GROUP BY x.run_id, x.generation_usage_source
     UNION ALL
     SELECT x.run_id, 'judge', x.judge_usage_source, sum(x.judge_input_tokens), sum(x.judge_output_tokens), count(*)
     FROM evaluation_results x JOIN evaluation_runs r ON r.id = x.run_id WHERE ${where} GROUP BY x.run_id, x.judge_usage_source`,
    { bind: [bind], type: QueryTypes.SELECT },
  );
}

/** The rollup (spec 2.5) of some usage groups. */
export function rollupOf(groups: UsageGroup[]): TokenUsageRollup {
  return rollupUsage(
    groups.map((g) => ({
      input_tokens: Number(g.input_tokens),
      output_tokens: Number(g.output_tokens),
      total_tokens: Number(g.input_tokens) + Number(g.output_tokens),
      token_usage_source: g.source,
      interactions: Number(g.interactions),
    })),
  );
}

const TOTALS = `(SELECT r.*,
    (r.status = 'running' AND r.lease_expires_at < now()) AS lease_lapsed,
    (r.status = 'running' AND r.worker_heartbeat_at < now() - make_interval(secs => $STALE)) AS heartbeat_stale,
    COALESCE(t.items_completed, 0) AS items_completed, COALESCE(t.items_failed, 0) AS items_failed,
    t.exact_match_rate, t.mean_token_f1, t.pass_rate, t.mean_judge_score,
    COALESCE(t.judged_count, 0) AS judged_count, COALESCE(t.invalid_judge_count, 0) AS invalid_judge_count
  FROM evaluation_runs r LEFT JOIN LATERAL (
    SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS items_completed,
           count(*) FILTER (WHERE status = 'failed')::int AS items_failed,
           avg((rule_score->>'exact_match')::float) AS exact_match_rate,
           avg((rule_score->>'token_f1')::float) AS mean_token_f1,
           avg((rule_score->>'pass_rate')::float) AS pass_rate,
           avg((judge_score->>'score')::float) FILTER (WHERE judge_status = 'scored') AS mean_judge_score,
           count(*) FILTER (WHERE judge_status = 'scored')::int AS judged_count,
           count(*) FILTER (WHERE judge_status = 'invalid_json')::int AS invalid_judge_count
    FROM evaluation_results x WHERE x.run_id = r.id) t ON true)`;

const RESULT_COLUMNS = `id uuid, run_id uuid, item_id uuid, position integer, question text, expected_answers jsonb, domain varchar,
  difficulty varchar, source varchar, predicted_answer text, response_source varchar, status varchar, error_message text, rule_score jsonb,
  judge_status varchar, judge_score jsonb, grounding jsonb, generation_input_tokens integer, generation_output_tokens integer,
  generation_total_tokens integer, generation_usage_source varchar, judge_input_tokens integer, judge_output_tokens integer,
  judge_total_tokens integer, judge_usage_source varchar, latency_ms integer, generation_cost jsonb, judge_cost jsonb, field_scores jsonb`;
const INSERT_RESULTS = `INSERT INTO evaluation_results (${RESULT_COLUMNS.replace(/ [a-z]+(?=,|$)/g, '')}, created_at)
  SELECT r.*, now() FROM jsonb_to_recordset($1::jsonb) AS r(${RESULT_COLUMNS})
  ON CONFLICT (run_id, item_id) DO NOTHING`;

/** Evaluation runs and their results (migration 0029). */
export class RunStore extends SqlStore {
  constructor(
    db: SqlStore['db'],
    private readonly staleSeconds: number,
  ) {
    super(db);
  }

  async insert(run: Omit<RunRow, keyof LeasedRow | 'id' | 'status' | 'error_message'>, transaction: Transaction): Promise<string> {
    const id = randomUUID();
    await this.db.query(
      `INSERT INTO evaluation_runs (id, agent_id, dataset_id, status, orchestrator_key, model_name, model_provider, model_temperature,
         model_routing_config, judge_prompt, judge_prompt_version, item_count, created_by, created_at)
       VALUES ($1, $2, $3, 'queued', $4, $5, $6, $7, $8, $9, $10, $11, $12, now())`,
      {
        bind: [
          id,
          run.agent_id,
          run.dataset_id,
          run.orchestrator_key,
          run.model_name,
          run.model_provider,
          run.model_temperature,
          run.model_routing_config && JSON.stringify(run.model_routing_config),
          run.judge_prompt,
          run.judge_prompt_version,
          run.item_count,
          run.created_by,
        ],
        transaction,
      },
    );
    return id;
  }

  private totals(): string {
    return TOTALS.replace('$STALE', String(this.staleSeconds));
  }

  async find(agentId: string, runId: string): Promise<RunWithTotals | undefined> {
    const [row] = await this.db.query<RunWithTotals>(`SELECT * FROM ${this.totals()} AS r WHERE r.id = try_uuid($1) AND r.agent_id = try_uuid($2)`, {
      bind: [runId, agentId],
      type: QueryTypes.SELECT,
    });
    return row && (await this.withUsage([row]))[0];
  }

  /** A run of any agent (a comparison's baseline). */
  async findAny(runId: string): Promise<RunWithTotals | undefined> {
    const [row] = await this.db.query<RunWithTotals>(`SELECT * FROM ${this.totals()} AS r WHERE r.id = try_uuid($1)`, {
      bind: [runId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  async page(filter: { agent_id?: string; dataset_id?: string }, page: { limit: number; cursor?: string }) {
    const bind: unknown[] = [];
    const clauses: string[] = [];
    if (filter.agent_id) clauses.push(`r.agent_id = $${bind.push(filter.agent_id)}`);
    if (filter.dataset_id) clauses.push(`r.dataset_id = $${bind.push(filter.dataset_id)}`);
    const found = await newestFirst<RunWithTotals, RunWithTotals>(
      this.db,
      { from: this.totals(), where: clauses.join(' AND ') || 'true', bind },
      page,
      (row) => row,
    );
    return { ...found, items: await this.withUsage(found.items) };
  }

  /** Adds each run's generation and judge usage rollups, summed in SQL by usage source. */
  private async withUsage(rows: RunWithTotals[]): Promise<RunWithTotals[]> {
    if (rows.length === 0) return rows;
    const groups = await evaluationUsage(this.db, { runIds: rows.map((r) => r.id) });
    const rollup = (runId: string, kind: UsageGroup['kind']) => rollupOf(groups.filter((g) => g.run_id === runId && g.kind === kind));
    return rows.map((row) => ({ ...row, generation_usage_rollup: rollup(row.id, 'generation'), judge_usage_rollup: rollup(row.id, 'judge') }));
  }

  /**
   * Claims the oldest run to work on under a lease: queued, recovering, or running with a lapsed lease (its worker
   * stopped). One claimant per run, whichever instance asks (`FOR UPDATE SKIP LOCKED`).
   */
  async claim(owner: string, leaseSeconds: number): Promise<RunRow | undefined> {
    const [row] = await this.db.query<RunRow>(
      `UPDATE evaluation_runs SET status = 'running', attempt_count = attempt_count + 1, lease_owner = $1,
         lease_expires_at = now() + make_interval(secs => $2), worker_heartbeat_at = now(), started_at = COALESCE(started_at, now())
       WHERE id = (SELECT id FROM evaluation_runs
                   WHERE status IN ('queued', 'recovering') OR (status = 'running' AND lease_expires_at < now())
                   ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING *`,
      { bind: [owner, leaseSeconds], type: QueryTypes.SELECT },
    );
    return row;
  }

  /**
   * Runs whose worker stopped (lease lapsed): `recovering`, to be claimed again; after `maxAttempts` claims, `failed`.
   * Returns how many are waiting to be claimed.
   */
  async recover(maxAttempts: number): Promise<number> {
    await this.db.query(
      `UPDATE evaluation_runs SET status = 'failed', completed_at = now(), lease_owner = NULL,
         error_message = 'its worker stopped ' || attempt_count || ' times; the run was given up'
       WHERE status IN ('running', 'recovering') AND (status = 'recovering' OR lease_expires_at < now()) AND attempt_count >= $1`,
      { bind: [maxAttempts] },
    );
    const [row] = await this.db.query<{ waiting: number }>(
      `WITH lapsed AS (UPDATE evaluation_runs SET status = 'recovering' WHERE status = 'running' AND lease_expires_at < now() RETURNING id)
       SELECT (SELECT count(*) FROM lapsed)::int + (SELECT count(*) FROM evaluation_runs WHERE status IN ('queued', 'recovering'))::int AS waiting`,
      { type: QueryTypes.SELECT },
    );
    return row?.waiting ?? 0;
  }

  /** Renews the lease; false when the run is no longer this worker's (recovered elsewhere). */
  heartbeat(runId: string, owner: string, leaseSeconds: number): Promise<boolean> {
    return renewLease(this.db, 'evaluation_runs', runId, owner, leaseSeconds);
  }

  async finish(runId: string, owner: string, status: 'completed' | 'failed', error: string | null): Promise<void> {
    await this.db.query(
      `UPDATE evaluation_runs SET status = $3, error_message = $4, completed_at = now(), lease_owner = NULL, lease_expires_at = NULL
       WHERE id = $1 AND lease_owner = $2`,
      { bind: [runId, owner, status, error] },
    );
  }

  async scoredItemIds(runId: string): Promise<Set<string>> {
    const rows = await this.db.query<{ item_id: string }>('SELECT item_id FROM evaluation_results WHERE run_id = $1', {
      bind: [runId],
      type: QueryTypes.SELECT,
    });
    return new Set(rows.map((r) => r.item_id));
  }

  /**
   * Stores items' results in one prepared statement (the rows as one JSON array); a result already stored for an
   * item (by an earlier worker) is kept.
   */
  async insertResults(results: ResultInput[]): Promise<void> {
    const rows = results.map((result) => ({
      id: randomUUID(),
      run_id: result.run_id,
      item_id: result.item_id,
      position: result.position,
      question: result.question,
      expected_answers: result.expected_answers,
      domain: result.domain,
      difficulty: result.difficulty,
      source: result.source,
      predicted_answer: result.predicted_answer,
      response_source: result.response_source,
      status: result.status,
      error_message: result.error_message,
      rule_score: result.rule_score,
      judge_status: result.judge_status,
      judge_score: result.judge_score,
      grounding: result.grounding,
      generation_input_tokens: result.generation_usage.input_tokens,
      generation_output_tokens: result.generation_usage.output_tokens,
      generation_total_tokens: result.generation_usage.total_tokens,
      generation_usage_source: result.generation_usage.token_usage_source,
      judge_input_tokens: result.judge_usage.input_tokens,
      judge_output_tokens: result.judge_usage.output_tokens,
      judge_total_tokens: result.judge_usage.total_tokens,
      judge_usage_source: result.judge_usage.token_usage_source,
      latency_ms: result.latency_ms,
      generation_cost: result.generation_cost,
      judge_cost: result.judge_cost,
      field_scores: result.field_scores ?? null,
    }));
    await preparedQuery(this.db, 'evaluation_results_insert', INSERT_RESULTS, [bindableJson(rows)]);
  }

  /** Results after `position`, in order: the pages the CSV export streams. */
  async resultsAfter(runId: string, position: number, limit: number): Promise<ResultRow[]> {
    return this.db.query<ResultRow>('SELECT * FROM evaluation_results WHERE run_id = $1 AND position > $2 ORDER BY position LIMIT $3', {
      bind: [runId, position, limit],
      type: QueryTypes.SELECT,
    });
  }

  /** The run's results aggregated by one slice column (`domain`, `difficulty` or `source`); null is its own slice. */
  async slices(runId: string, column: SliceColumn): Promise<SliceRow[]> {
    return this.db.query<SliceRow>(
      `SELECT ${column} AS value, count(*)::int AS item_count, count(*) FILTER (WHERE status = 'failed')::int AS failed_count,
              avg((rule_score->>'exact_match')::float) AS exact_match_rate, avg((rule_score->>'token_f1')::float) AS mean_token_f1,
              avg((rule_score->>'pass_rate')::float) AS pass_rate,
              avg((judge_score->>'score')::float) FILTER (WHERE judge_status = 'scored') AS mean_judge_score
       FROM evaluation_results WHERE run_id = $1 GROUP BY ${column} ORDER BY ${column} NULLS LAST`,
      { bind: [runId], type: QueryTypes.SELECT },
    );
  }

  /** Both runs' results of every item either has, by item, in dataset order. */
  async pairs(baselineId: string, candidateId: string): Promise<{ baseline: ResultRow | null; candidate: ResultRow | null }[]> {
    return this.db.query(
      `SELECT to_jsonb(b) AS baseline, to_jsonb(c) AS candidate
       FROM (SELECT * FROM evaluation_results WHERE run_id = $1) b FULL JOIN (SELECT * FROM evaluation_results WHERE run_id = $2) c ON c.item_id = b.item_id
       ORDER BY COALESCE(c.position, b.position)`,
      { bind: [baselineId, candidateId], type: QueryTypes.SELECT },
    );
  }

  async insertVerdict(verdict: {
    run_id: string;
    passed: boolean;
    policy: unknown;
    metrics: unknown;
    reasons: string[];
    created_by: string | null;
  }): Promise<{ id: string; created_at: Date }> {
    const [row] = await this.db.query<{ id: string; created_at: Date }>(
      `INSERT INTO evaluation_gate_verdicts (id, run_id, passed, policy, metrics, reasons, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING id, created_at`,
      {
        bind: [
          randomUUID(),
          verdict.run_id,
          verdict.passed,
          JSON.stringify(verdict.policy),
          JSON.stringify(verdict.metrics),
          JSON.stringify(verdict.reasons),
          verdict.created_by,
        ],
        type: QueryTypes.SELECT,
      },
    );
    return row!;
  }

  async results(runId: string, offset: number, limit: number): Promise<ResultRow[]> {
    return this.db.query<ResultRow>('SELECT * FROM evaluation_results WHERE run_id = $1 ORDER BY position OFFSET $2 LIMIT $3', {
      bind: [runId, offset, limit],
      type: QueryTypes.SELECT,
    });
  }
}

/** The estimated costs of an agent's evaluation results: its answers' and its judgements', summed in SQL. */
export async function evaluationCosts(db: SqlStore['db'], agentId: string): Promise<{ generation: EstimatedCostSummary; judge: EstimatedCostSummary }> {
  const sum = (column: string) => `json_build_object(
      'input_cost_usd', COALESCE(sum((x.${column}->>'input_cost_usd')::numeric), 0), 'output_cost_usd', COALESCE(sum((x.${column}->>'output_cost_usd')::numeric), 0),
      'total_cost_usd', COALESCE(sum((x.${column}->>'total_cost_usd')::numeric), 0),
      'estimated_interaction_count', COALESCE(sum((x.${column}->>'estimated_interaction_count')::int), 0),
      'missing_pricing_count', COALESCE(sum((x.${column}->>'missing_pricing_count')::int), 0))`;
  const [row] = await db.query<{ generation: Record<string, string | number>; judge: Record<string, string | number> }>(
    `SELECT ${sum('generation_cost')} AS generation, ${sum('judge_cost')} AS judge
     FROM evaluation_results x JOIN evaluation_runs r ON r.id = x.run_id WHERE r.agent_id = $1`,
    { bind: [agentId], type: QueryTypes.SELECT },
  );
  const cost = (value: Record<string, string | number>): EstimatedCostSummary => ({
    input_cost_usd: Math.round(Number(value.input_cost_usd) * 1e6) / 1e6,
    output_cost_usd: Math.round(Number(value.output_cost_usd) * 1e6) / 1e6,
    total_cost_usd: Math.round(Number(value.total_cost_usd) * 1e6) / 1e6,
    estimated_interaction_count: Number(value.estimated_interaction_count),
    missing_pricing_count: Number(value.missing_pricing_count),
  });
  return { generation: cost(row!.generation), judge: cost(row!.judge) };
}
