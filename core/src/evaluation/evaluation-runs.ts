import { ConflictError, NotFoundError, ValidationError, type JobScheduler, type Logger } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../admin/operation.js';
import { judgePromptVersion, type Agents } from '../agents/agents.js';
import type { HostConfig } from '../config/schema.js';
import type { EvaluationDatasets } from './datasets.js';
import { DEFAULT_JUDGE_PROMPT } from './judge.js';
import type { ExtractionDeps } from '../document-recognition/extract.js';
import { documentEvaluationProblem, scoreDocumentItem } from './document-items.js';
import { gateReasons, type GatePolicy } from './gate.js';
import { resultsCsv } from './results-csv.js';
import { RunStore, SLICE_COLUMNS, type ResultRow, type RunWithTotals, type SliceRow } from './run-store.js';
import { RunWorker, type EvaluationTurns } from './run-worker.js';

/** A read that finds a run whose worker stopped asks for a dispatch at most this often. */
const READ_KICK_MS = 5_000;

export interface CreateRunInput {
  dataset_id: string;
  model_name?: string;
  model_provider?: string;
  model_temperature?: number;
}

/**
 * Evaluation runs (spec 3.4, 4.9): made on a chat agent and a frozen QA snapshot (or a fusion agent and a frozen
 * document_recognition snapshot, scored field by field), with the model routing and judge
 * prompt snapshotted; run by {@link RunWorker}; read with their scores and usage rollups.
 */
export class EvaluationRuns {
  private readonly store: RunStore;
  private readonly worker: RunWorker;
  private lastReadKick = 0;

  constructor(
    private readonly db: Sequelize,
    private readonly config: HostConfig,
    private readonly agents: Agents,
    private readonly datasets: EvaluationDatasets,
    instanceId: string,
    documents: ExtractionDeps,
    logger: Logger,
  ) {
    const staleSeconds = config.evaluation.run_lease_seconds;
    this.store = new RunStore(db, staleSeconds);
    this.worker = new RunWorker({
      store: this.store,
      config: config.evaluation,
      instanceId,
      agent: (agentId) => agents.get(agentId).catch((error: unknown) => (error instanceof NotFoundError ? null : Promise.reject(error))),
      items: (datasetId) => datasets.allItems(datasetId),
      scoreDocument: (run, agent, override, item, signal) => scoreDocumentItem(run, agent, override, item, documents, signal),
      logger,
    });
  }

  start(jobs: JobScheduler, turns: EvaluationTurns): Promise<void> {
    return this.worker.start(jobs, turns);
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  async create(agentId: string, input: CreateRunInput, op: Operation) {
    const agent = await this.agents.get(agentId);
    if (agent.agent_type !== 'chat' && agent.agent_type !== 'fusion') {
      throw new ConflictError(`agent ${agentId} is a ${agent.agent_type} agent; evaluation runs on chat agents (QA) and fusion agents (document recognition)`, {
        code: 'EVALUATION_DATASET_TASK_TYPE',
      });
    }
    const dataset = await this.datasets.require(input.dataset_id).catch((error: unknown) => {
      if (error instanceof NotFoundError)
        throw new ValidationError([{ loc: ['body', 'dataset_id'], msg: `no evaluation dataset ${input.dataset_id}`, type: 'value_error' }]);
      throw error;
    });
    if (!dataset.frozen) {
      throw new ConflictError(`dataset ${dataset.id} is not frozen; freeze it (POST /evaluation-datasets/${dataset.id}/freeze) and run on the snapshot`, {
        code: 'EVALUATION_DATASET_NOT_FROZEN',
      });
    }
    if (dataset.task_type === 'qa' && agent.agent_type !== 'chat')
      throw new ConflictError(`a qa snapshot runs on a chat agent, not on a ${agent.agent_type} agent`, { code: 'EVALUATION_DATASET_TASK_TYPE' });
    const documentProblem = dataset.task_type === 'document_recognition' ? documentEvaluationProblem(agent) : undefined;
    if (documentProblem) throw new ConflictError(documentProblem, { code: 'EVALUATION_DATASET_TASK_TYPE' });
    if ((input.model_name === undefined) !== (input.model_provider === undefined)) {
      const missing = input.model_name === undefined ? 'model_name' : 'model_provider';
      throw new ValidationError([{ loc: ['body', missing], msg: 'model_name and model_provider name one model together', type: 'value_error' }]);
    }
    if (input.model_temperature !== undefined && input.model_name === undefined) {
      throw new ValidationError([{ loc: ['body', 'model_temperature'], msg: 'model_temperature needs model_name and model_provider', type: 'value_error' }]);
    }
    const explicit = input.model_name !== undefined;
    const judgePrompt = agent.judge_prompt?.trim() || DEFAULT_JUDGE_PROMPT;
    const runId = await this.db.transaction(async (transaction) => {
      const id = await this.store.insert(
        {
          agent_id: agentId,
          dataset_id: dataset.id,
          orchestrator_key: agent.orchestrator_key ?? this.config.agent.default_orchestrator_key,
          model_name: input.model_name ?? null,
          model_provider: input.model_provider ?? null,
          model_temperature: input.model_temperature ?? null,
          // An explicit model is the run's one model: no routing (spec 4.9).
          model_routing_config: explicit ? null : (agent.model_routing_config as Record<string, unknown> | null),
          judge_prompt: judgePrompt,
          judge_prompt_version: judgePromptVersion(agent.judge_prompt),
          item_count: dataset.item_count,
          created_by: op.operator.admin_user_id,
        },
        transaction,
      );
      await auditOperation(
        this.db,
        'core.evaluation',
        op,
        {
          action: 'evaluation_run.create',
          target_type: 'evaluation_run',
          target_id: id,
          payload: { agent_id: agentId, dataset_id: dataset.id, explicit_model: explicit },
        },
        transaction,
      );
      return id;
    });
    await this.worker.kick();
    return this.get(agentId, runId);
  }

  async list(agentId: string, page: { limit: number; cursor?: string }) {
    await this.agents.get(agentId);
    const found = await this.store.page({ agent_id: agentId }, page);
    this.kickIfStopped(found.items);
    return { ...found, items: found.items.map(presentRun) };
  }

  /** Runs of a dataset (or snapshot), newest first. */
  async ofDataset(datasetId: string, page: { limit: number; cursor?: string }) {
    await this.datasets.require(datasetId);
    const found = await this.store.page({ dataset_id: datasetId }, page);
    return { ...found, items: found.items.map(presentRun) };
  }

  async get(agentId: string, runId: string) {
    const run = await this.require(agentId, runId);
    this.kickIfStopped([run]);
    return presentRun(run);
  }

  async results(agentId: string, runId: string, page: { offset: number; limit: number }) {
    const run = await this.require(agentId, runId);
    const rows = await this.store.results(run.id, page.offset, page.limit);
    return { items: rows.map(presentResult), total: run.items_completed + run.items_failed, offset: page.offset, limit: page.limit };
  }

  /** The run's results as a streamed CSV attachment. */
  async resultsCsv(agentId: string, runId: string) {
    const run = await this.require(agentId, runId);
    return { filename: `evaluation-run-${run.id}.csv`, body: resultsCsv(this.store, run.id) };
  }

  /** Aggregates by domain, difficulty and source (null is a slice of its own: items without the field). */
  async slices(agentId: string, runId: string) {
    const run = await this.require(agentId, runId);
    const present = (row: SliceRow) => ({
      value: row.value,
      item_count: row.item_count,
      failed_count: row.failed_count,
      exact_match_rate: round(row.exact_match_rate),
      mean_token_f1: round(row.mean_token_f1),
      pass_rate: round(row.pass_rate),
      mean_judge_score: round(row.mean_judge_score),
    });
    const [domain, difficulty, source] = await Promise.all(SLICE_COLUMNS.map((column) => this.store.slices(run.id, column)));
    return { run_id: run.id, by_domain: domain!.map(present), by_difficulty: difficulty!.map(present), by_source: source!.map(present) };
  }

  /** Judges a completed run by the gate policy (`[evaluation.gate]`, with overrides) and keeps the verdict. */
  async evaluateGate(agentId: string, runId: string, overrides: Partial<GatePolicy>, op: Operation) {
    const run = await this.require(agentId, runId);
    if (run.status !== 'completed') {
      throw new ConflictError(`evaluation run ${run.id} is ${run.lease_lapsed ? 'heartbeat_expired' : run.status}; a gate judges completed runs`, {
        code: 'EVALUATION_RUN_NOT_FINISHED',
      });
    }
    const policy: GatePolicy = { ...this.config.evaluation.gate, ...overrides };
    const items = run.items_completed + run.items_failed;
    const metrics = {
      items,
      pass_rate: round(run.pass_rate),
      mean_token_f1: round(run.mean_token_f1),
      failed_item_ratio: items === 0 ? 0 : round(run.items_failed / items)!,
      mean_judge_score: round(run.mean_judge_score),
    };
    const reasons = gateReasons(policy, metrics);
    const verdict = await this.db.transaction(async (transaction) => {
      const stored = await this.store.insertVerdict({
        run_id: run.id,
        passed: reasons.length === 0,
        policy,
        metrics,
        reasons,
        created_by: op.operator.admin_user_id,
      });
      await auditOperation(
        this.db,
        'core.evaluation',
        op,
        { action: 'evaluation_run.gate', target_type: 'evaluation_run', target_id: run.id, payload: { passed: reasons.length === 0 } },
        transaction,
      );
      return stored;
    });
    return { verdict_id: verdict.id, run_id: run.id, passed: reasons.length === 0, policy, metrics, reasons, created_at: verdict.created_at.toISOString() };
  }

  /**
   * Compares this run with a baseline run of the same snapshot, item by item: the score deltas (candidate minus
   * baseline) and whether each item improved, regressed or stayed: by the judge score where it moved, else by token F1.
   */
  async compare(agentId: string, runId: string, baselineRunId: string) {
    const candidate = await this.require(agentId, runId);
    const baseline = await this.store.findAny(baselineRunId);
    if (!baseline) throw new ValidationError([{ loc: ['query', 'baseline_run_id'], msg: `no evaluation run ${baselineRunId}`, type: 'value_error' }]);
    if (baseline.dataset_id !== candidate.dataset_id) {
      throw new ConflictError(`run ${baseline.id} used snapshot ${baseline.dataset_id}, run ${candidate.id} used ${candidate.dataset_id}`, {
        code: 'EVALUATION_RUNS_NOT_COMPARABLE',
      });
    }
    for (const run of [candidate, baseline]) {
      if (run.status !== 'completed')
        throw new ConflictError(`evaluation run ${run.id} is ${run.status}; compare completed runs`, { code: 'EVALUATION_RUN_NOT_FINISHED' });
    }
    const side = (row: ResultRow | null) =>
      row && {
        status: row.status,
        predicted_answer: row.predicted_answer,
        token_f1: row.rule_score?.token_f1 ?? null,
        judge_score: row.judge_score?.score ?? null,
      };
    const delta = (a: number | null | undefined, b: number | null | undefined) =>
      a === null || a === undefined || b === null || b === undefined ? null : round(a - b);
    const items = (await this.store.pairs(baseline.id, candidate.id)).map(({ baseline: before, candidate: after }) => {
      const f1 = delta(after?.rule_score?.token_f1, before?.rule_score?.token_f1);
      const judge = delta(after?.judge_score?.score, before?.judge_score?.score);
      // The judge decides where its score moved; where it did not (or there is none), token F1 does.
      const moved = judge !== null && judge !== 0 ? judge : f1;
      return {
        item_id: (after ?? before)!.item_id,
        position: (after ?? before)!.position,
        question: (after ?? before)!.question,
        baseline: side(before),
        candidate: side(after),
        delta_token_f1: f1,
        delta_judge_score: judge,
        change: moved === null ? 'unscored' : moved > 0 ? 'improved' : moved < 0 ? 'regressed' : 'unchanged',
      };
    });
    const count = (change: string) => items.filter((item) => item.change === change).length;
    return {
      baseline_run_id: baseline.id,
      run_id: candidate.id,
      dataset_id: candidate.dataset_id,
      summary: {
        improved: count('improved'),
        regressed: count('regressed'),
        unchanged: count('unchanged'),
        unscored: count('unscored'),
        delta_pass_rate: delta(candidate.pass_rate, baseline.pass_rate),
        delta_mean_token_f1: delta(candidate.mean_token_f1, baseline.mean_token_f1),
        delta_mean_judge_score: delta(candidate.mean_judge_score, baseline.mean_judge_score),
      },
      items,
    };
  }

  private async require(agentId: string, runId: string): Promise<RunWithTotals> {
    const run = await this.store.find(agentId, runId);
    if (!run) throw new NotFoundError(`agent ${agentId} has no evaluation run ${runId}`, { code: 'EVALUATION_RUN_NOT_FOUND' });
    return run;
  }

  /** The throttled check of the read endpoints (spec 3.4): a run whose worker stopped is recovered without waiting. */
  private kickIfStopped(runs: RunWithTotals[]): void {
    if (!runs.some((run) => run.lease_lapsed) || Date.now() - this.lastReadKick < READ_KICK_MS) return;
    this.lastReadKick = Date.now();
    void this.worker.kick().catch(() => undefined);
  }
}

const iso = (date: Date | null) => date?.toISOString() ?? null;
const round = (value: number | null) => (value === null ? null : Math.round(Number(value) * 10_000) / 10_000);

/** `execution_state` (spec 3.4): the stored status, or `heartbeat_expired` for a running run whose lease lapsed. */
function presentRun(run: RunWithTotals) {
  return {
    run_id: run.id,
    agent_id: run.agent_id,
    dataset_id: run.dataset_id,
    execution_state: run.lease_lapsed ? 'heartbeat_expired' : run.status,
    heartbeat_stale: run.heartbeat_stale,
    orchestrator_key: run.orchestrator_key,
    model_name: run.model_name,
    model_provider: run.model_provider,
    model_temperature: run.model_temperature,
    model_routing_config: run.model_routing_config,
    judge_prompt: run.judge_prompt,
    judge_prompt_version: run.judge_prompt_version,
    item_count: run.item_count,
    items_completed: run.items_completed,
    items_failed: run.items_failed,
    summary: {
      exact_match_rate: round(run.exact_match_rate),
      mean_token_f1: round(run.mean_token_f1),
      pass_rate: round(run.pass_rate),
      mean_judge_score: round(run.mean_judge_score),
      judged_count: run.judged_count,
      invalid_judge_count: run.invalid_judge_count,
    },
    generation_usage_rollup: run.generation_usage_rollup,
    judge_usage_rollup: run.judge_usage_rollup,
    combined_total_tokens: run.generation_usage_rollup.total_tokens + run.judge_usage_rollup.total_tokens,
    attempt_count: run.attempt_count,
    error_message: run.error_message,
    created_by: run.created_by,
    created_at: run.created_at.toISOString(),
    started_at: iso(run.started_at),
    // The only terminal time: empty while queued or running (spec 2.9).
    completed_at: run.status === 'completed' || run.status === 'failed' ? iso(run.completed_at) : null,
    worker_heartbeat_at: iso(run.worker_heartbeat_at),
  };
}

function presentResult(row: ResultRow) {
  const usage = (prefix: 'generation' | 'judge') => ({
    input_tokens: row[`${prefix}_input_tokens`],
    output_tokens: row[`${prefix}_output_tokens`],
    total_tokens: row[`${prefix}_total_tokens`],
    token_usage_source: row[`${prefix}_usage_source`],
  });
  return {
    result_id: row.id,
    item_id: row.item_id,
    position: row.position,
    question: row.question,
    expected_answers: row.expected_answers,
    domain: row.domain,
    difficulty: row.difficulty,
    source: row.source,
    predicted_answer: row.predicted_answer,
    response_source: row.response_source,
    status: row.status,
    error_message: row.error_message,
    rule_score: row.rule_score,
    judge_status: row.judge_status,
    judge_score: row.judge_score,
    grounding: row.grounding,
    field_scores: row.field_scores ?? null,
    generation_usage: usage('generation'),
    judge_usage: usage('judge'),
    latency_ms: row.latency_ms,
    created_at: row.created_at.toISOString(),
  };
}
