import type { JobScheduler, Logger } from '@agent-host/sdk';
import type { AgentView } from '../agents/agents.js';
import type { EvaluatedTurn, JudgeModel } from '../chat/turn/evaluate-turn.js';
import type { ModelOverride } from '../chat/model-router.js';
import type { HostConfig } from '../config/schema.js';
import { WriteBehind } from '../db/write-behind.js';
import { SHORT_JOB_LOCK_MS } from '../jobs/short-lock.js';
import { EMPTY_COST } from '../usage/cost.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';
import type { ItemRow } from './dataset-store.js';
import { judgeAnswer } from './judge.js';
import { ruleScore } from './rule-score.js';
import type { ResultInput, RunRow, RunStore } from './run-store.js';

export const DISPATCH_JOB = 'dispatch';

/** What every result repeats of its run and item. */
export const resultBase = (run: RunRow, item: ItemRow) => ({
  run_id: run.id,
  item_id: item.id,
  position: item.position,
  question: item.question,
  expected_answers: item.expected_answers,
  domain: item.domain,
  difficulty: item.difficulty,
  source: item.source,
});
/** Results stored per statement, or after this long: a run's progress shows within a quarter of a second. */
const RESULT_BATCH = { batchSize: 64, maxDelayMs: 250 };

/** What a run needs of the chat pipeline (`ChatService`): an item's turn, and a judge. */
export interface EvaluationTurns {
  evaluate(input: { agent: AgentView; message: string; override: ModelOverride | null; sessionId: string; signal: AbortSignal }): Promise<EvaluatedTurn>;
  judgeModel(agent: AgentView, override: ModelOverride | null): JudgeModel;
}

export interface RunWorkerDeps {
  store: RunStore;
  config: HostConfig['evaluation'];
  instanceId: string;
  /** The run's agent now (null once deleted), and the items of its frozen snapshot. */
  agent: (agentId: string) => Promise<AgentView | null>;
  items: (datasetId: string) => Promise<ItemRow[]>;
  /** A `document_recognition` item: its document extracted by the agent's draft, scored field by field. */
  scoreDocument: (run: RunRow, agent: AgentView, override: ModelOverride | null, item: ItemRow, signal: AbortSignal) => Promise<ResultInput>;
  logger: Logger;
}

/**
 * Runs evaluation runs (spec 3.4). A dispatcher job (every `[evaluation] supervisor_interval_seconds`, and at once when
 * a run is made) recovers runs whose worker stopped and claims queued ones under a lease, up to
 * `runs_per_instance` at a time; each claimed run scores its items not yet scored, `item_concurrency` at a time, and
 * renews its lease by a heartbeat. A run recovered elsewhere (its lease lost) stops here without finishing.
 */
export class RunWorker {
  private jobs?: JobScheduler;
  private turns?: EvaluationTurns;
  private readonly active = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private stopping = false;

  constructor(private readonly deps: RunWorkerDeps) {}

  async start(jobs: JobScheduler, turns: EvaluationTurns): Promise<void> {
    this.jobs = jobs;
    this.turns = turns;
    if (!this.deps.config.enabled) {
      this.deps.logger.info('[evaluation] enabled = false: this instance runs no evaluation run; runs stay readable');
      return;
    }
    jobs.define(DISPATCH_JOB, () => this.dispatch(), { lockLifetimeMs: SHORT_JOB_LOCK_MS, concurrency: 1 });
    await jobs.every(`${this.deps.config.supervisor_interval_seconds} seconds`, DISPATCH_JOB, {});
  }

  /** Asks for a dispatch now (a run was made, or a read found a run whose worker stopped). */
  async kick(): Promise<void> {
    if (this.jobs && this.deps.config.enabled) await this.jobs.now(DISPATCH_JOB, {});
  }

  /** Stops claiming; runs in progress here stop at once, store nothing more, and are recovered by another instance. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const { controller } of this.active.values()) controller.abort(new Error('the host is stopping'));
    await Promise.all([...this.active.values()].map(({ done }) => done));
  }

  async dispatch(): Promise<void> {
    const { store, config } = this.deps;
    await store.recover(config.max_attempts);
    while (!this.stopping && this.active.size < config.runs_per_instance) {
      const run = await store.claim(this.deps.instanceId, config.run_lease_seconds);
      if (!run) return;
      const controller = new AbortController();
      const done = this.execute(run, controller)
        .catch((error: unknown) => this.deps.logger.error({ err: error, run_id: run.id }, 'an evaluation run failed unexpectedly'))
        .finally(() => this.active.delete(run.id));
      this.active.set(run.id, { controller, done });
    }
  }

  private async execute(run: RunRow, controller: AbortController): Promise<void> {
    const { store, config, instanceId, logger } = this.deps;
    const agent = await this.deps.agent(run.agent_id);
    if (!agent) return store.finish(run.id, instanceId, 'failed', 'the agent was deleted');
    const heartbeat = setInterval(
      () =>
        void store.heartbeat(run.id, instanceId, config.run_lease_seconds).then(
          (held) => held || controller.abort(new Error('the run was recovered by another worker')),
          (error: unknown) => logger.warn({ err: error, run_id: run.id }, 'evaluation run heartbeat failed'),
        ),
      (config.run_lease_seconds * 1000) / 3,
    );
    try {
      const scored = await store.scoredItemIds(run.id);
      const todo = (await this.deps.items(run.dataset_id)).filter((item) => !scored.has(item.id));
      const runAgent: AgentView = {
        ...agent,
        orchestrator_key: run.orchestrator_key,
        model_routing_config: run.model_routing_config as AgentView['model_routing_config'],
      };
      const override: ModelOverride | null = run.model_name
        ? { model_name: run.model_name, model_provider: run.model_provider ?? undefined, model_temperature: run.model_temperature ?? undefined }
        : null;
      // Results are stored a batch to a statement. A batch that cannot be stored stops the run here: its items are
      // scored again by the next claim, as are those scored but not yet stored when a host dies.
      const results = new WriteBehind<ResultInput>((rows) => store.insertResults(rows), {
        ...RESULT_BATCH,
        onError: (error) => {
          logger.error({ err: error, run_id: run.id }, 'evaluation results could not be stored; the run stops here');
          controller.abort(error);
        },
      });
      let next = 0;
      const lane = async () => {
        while (next < todo.length && !controller.signal.aborted) {
          const item = todo[next++]!;
          const result = item.source_document
            ? await this.deps.scoreDocument(run, runAgent, override, item, controller.signal)
            : await this.score(run, runAgent, override, item, controller.signal);
          // An item cut short by the stop is not a failure of the agent: it is left for the next claim.
          if (controller.signal.aborted) return;
          results.add(result);
        }
      };
      await Promise.all(Array.from({ length: Math.min(config.item_concurrency, todo.length) }, lane));
      await results.drain();
      // Stopped here (the host stops, the run went to another worker, or a batch failed): the items left are resumed
      // by the next claim.
      if (controller.signal.aborted) return;
      await store.finish(run.id, instanceId, 'completed', null);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** One item: the agent's answer, its rule score, and the judge's verdict; a model or judge failure fails the item only. */
  private async score(run: RunRow, agent: AgentView, override: ModelOverride | null, item: ItemRow, signal: AbortSignal): Promise<ResultInput> {
    const started = Date.now();
    const base = resultBase(run, item);
    const turn = await this.turns!.evaluate({ agent, message: item.question, override, sessionId: `eval-${run.id}-${item.position}`, signal });
    const grounding = turn.grounding && { path: turn.grounding.path, grounded: turn.grounding.grounded, cited_ids: turn.grounding.cited_ids };
    const skipped: TokenUsageSummary = { input_tokens: 0, output_tokens: 0, total_tokens: 0, token_usage_source: 'no_model_invocation' };
    if (turn.error) {
      return {
        ...base,
        predicted_answer: turn.reply || null,
        response_source: turn.response_source,
        status: 'failed',
        error_message: turn.error,
        rule_score: null,
        judge_status: 'skipped',
        judge_score: null,
        grounding,
        generation_usage: turn.usage,
        judge_usage: skipped,
        generation_cost: turn.cost,
        judge_cost: EMPTY_COST,
        latency_ms: Date.now() - started,
      };
    }
    const rule = ruleScore(turn.reply, item.expected_answers, this.deps.config.pass_f1_threshold);
    const judge = this.turns!.judgeModel(agent, override);
    let judged: Pick<ResultInput, 'judge_status' | 'judge_score' | 'status' | 'error_message'>;
    try {
      const verdict = await judgeAnswer(
        judge.model,
        run.judge_prompt,
        { question: item.question, expected_answers: item.expected_answers, answer: turn.reply },
        signal,
      );
      judged = { judge_status: verdict.status, judge_score: verdict.score, status: 'succeeded', error_message: null };
    } catch (error) {
      judged = { judge_status: 'failed', judge_score: null, status: 'failed', error_message: `the judge failed: ${(error as Error).message}` };
    }
    const spent = judge.spent();
    return {
      ...base,
      predicted_answer: turn.reply,
      response_source: turn.response_source,
      rule_score: rule,
      grounding,
      generation_usage: turn.usage,
      judge_usage: spent.usage,
      generation_cost: turn.cost,
      judge_cost: spent.cost,
      latency_ms: Date.now() - started,
      ...judged,
    };
  }
}
