import { ConflictError, NotFoundError, ValidationError, type JobScheduler, type Logger } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../admin/operation.js';
import { judgePromptVersion, type Agents } from '../agents/agents.js';
import type { HostConfig } from '../config/schema.js';
import type { EvaluationDatasets } from './datasets.js';
import { DEFAULT_JUDGE_PROMPT } from './judge.js';
import { RunStore, type ResultRow, type RunWithTotals } from './run-store.js';
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
 * Evaluation runs (spec 3.4, 4.9): made on a chat agent and a frozen QA snapshot, with the model routing and judge
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
    if (agent.agent_type !== 'chat')
      throw new ConflictError(`agent ${agentId} is a ${agent.agent_type} agent; QA evaluation runs on chat agents`, { code: 'EVALUATION_DATASET_TASK_TYPE' });
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
    if (dataset.task_type !== 'qa')
      throw new ConflictError(`a ${dataset.task_type} snapshot is not run on a chat agent`, { code: 'EVALUATION_DATASET_TASK_TYPE' });
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
    generation_usage: usage('generation'),
    judge_usage: usage('judge'),
    latency_ms: row.latency_ms,
    created_at: row.created_at.toISOString(),
  };
}
