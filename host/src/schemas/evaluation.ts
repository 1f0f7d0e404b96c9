import { z } from 'zod';
import { timestamp } from '../validation.js';
import { tokenUsageRollup, tokenUsageSummary } from './usage.js';

/** Evaluation datasets and items as requests and responses show them (spec 2.9, 4.9), from core/src/evaluation. */

const TASK_TYPES = ['qa', 'document_recognition'] as const;

export const datasetCreateBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(5000).optional(),
    task_type: z.enum(TASK_TYPES).describe('`qa`: questions for chat agents; `document_recognition`: reviewed document-recognition runs'),
  })
  .strict();

export const datasetFilters = z
  .object({
    task_type: z.enum(TASK_TYPES).optional(),
    frozen: z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .optional(),
  })
  .strict();

export const evaluationDataset = z
  .object({
    dataset_id: z.string().uuid(),
    name: z.string(),
    description: z.string(),
    task_type: z.enum(TASK_TYPES),
    frozen: z.boolean().describe('A frozen snapshot: its items and source CSV never change; runs use only frozen snapshots'),
    parent_dataset_id: z.string().uuid().nullable().describe('For a frozen snapshot, the dataset it was frozen from'),
    frozen_at: timestamp.nullable(),
    item_count: z.number().int(),
    snapshot_count: z.number().int().describe('Frozen snapshots made from this dataset'),
    source_csv_filename: z.string().nullable(),
    source_csv_content_type: z.string().nullable(),
    source_csv_size_bytes: z.number().int().nullable(),
    source_csv_uploaded_at: timestamp.nullable(),
    source_csv_download_url: z.string().nullable().describe('A presigned URL, or this dataset’s own /source-csv route (object_store_proxy)'),
    source_csv_download_mode: z.enum(['presigned_url', 'object_store_proxy']).nullable(),
    source_csv_download_warning: z.string().nullable(),
    created_by: z.string().uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'EvaluationDataset' });

export const datasetItem = z
  .object({
    item_id: z.string().uuid(),
    position: z.number().int().describe('1 for the first data row of the CSV'),
    question: z.string(),
    expected_answers: z.array(z.string()).describe('Every accepted answer, in column order'),
    domain: z.string().nullable(),
    difficulty: z.string().nullable(),
    source: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    source_run_id: z.string().uuid().nullable().describe('document_recognition items: the reviewed run the item was imported from'),
    source_document: z
      .object({ filename: z.string(), content_type: z.string(), size_bytes: z.number().int(), sha256: z.string() })
      .nullable()
      .describe('document_recognition items: the document an evaluation run extracts (a snapshot keeps its own copy)'),
    expected_fields: z
      .record(z.string(), z.unknown())
      .nullable()
      .describe('document_recognition items: the reviewed value of each accepted or corrected field'),
  })
  .meta({ id: 'EvaluationDatasetItem' });

export const recognitionImportBody = z
  .object({ run_id_list: z.array(z.string().uuid()).min(1).max(500).describe('Reviewed document-recognition runs, one item each') })
  .strict();

export const offsetPaging = {
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(100),
};

export const itemsPage = z.object({ items: z.array(datasetItem), total: z.number().int(), offset: z.number().int(), limit: z.number().int() });

export const runCreateBody = z
  .object({
    dataset_id: z.string().uuid().describe('A frozen QA snapshot (POST /evaluation-datasets/{dataset_id}/freeze)'),
    model_name: z.string().trim().min(1).max(200).optional(),
    model_provider: z.string().trim().min(1).max(80).optional(),
    model_temperature: z.number().min(0).max(2).optional(),
  })
  .strict();

const EXECUTION_STATES = ['queued', 'recovering', 'running', 'completed', 'failed', 'heartbeat_expired'] as const;

export const evaluationRun = z
  .object({
    run_id: z.string().uuid(),
    agent_id: z.string().uuid(),
    dataset_id: z.string().uuid(),
    execution_state: z.enum(EXECUTION_STATES),
    heartbeat_stale: z.boolean(),
    orchestrator_key: z.string(),
    model_name: z.string().nullable().describe('The explicit model of the run; null when the agent’s routing is used'),
    model_provider: z.string().nullable(),
    model_temperature: z.number().nullable(),
    model_routing_config: z.record(z.string(), z.unknown()).nullable().describe('The agent’s routing when the run started; empty with an explicit model'),
    judge_prompt: z.string().describe('The judge prompt frozen into the run (the built-in one when the agent has none)'),
    judge_prompt_version: z.string(),
    item_count: z.number().int(),
    items_completed: z.number().int(),
    items_failed: z.number().int(),
    summary: z.object({
      exact_match_rate: z.number().nullable(),
      mean_token_f1: z.number().nullable(),
      pass_rate: z.number().nullable(),
      mean_judge_score: z.number().nullable(),
      judged_count: z.number().int(),
      invalid_judge_count: z.number().int(),
    }),
    generation_usage_rollup: tokenUsageRollup,
    judge_usage_rollup: tokenUsageRollup,
    combined_total_tokens: z.number().int(),
    attempt_count: z.number().int(),
    error_message: z.string().nullable(),
    created_by: z.string().uuid().nullable(),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable().describe('Set once completed or failed; empty while queued or running'),
    worker_heartbeat_at: timestamp.nullable().describe('The worker’s last sign of life; never an end time'),
  })
  .meta({ id: 'EvaluationRun' });

export const evaluationResult = z
  .object({
    result_id: z.string().uuid(),
    item_id: z.string().uuid(),
    position: z.number().int(),
    question: z.string(),
    expected_answers: z.array(z.string()),
    domain: z.string().nullable(),
    difficulty: z.string().nullable(),
    source: z.string().nullable(),
    predicted_answer: z.string().nullable(),
    response_source: z.string().nullable(),
    status: z.enum(['succeeded', 'failed']),
    error_message: z.string().nullable(),
    rule_score: z
      .object({ exact_match: z.number(), token_f1: z.number(), pass_rate: z.number(), matched_expected_answer_index: z.number().int().nullable() })
      .nullable(),
    judge_status: z.enum(['scored', 'invalid_json', 'failed', 'skipped']),
    judge_score: z
      .object({
        score: z.number().nullable(),
        reason: z.string().nullable(),
        issues: z.array(z.string()),
        improvement_suggestions: z.array(z.string()),
        suggested_better_answer: z.string().nullable(),
        confidence: z.number().nullable(),
        rubric_version: z.string(),
        raw_response_text: z.string(),
      })
      .nullable(),
    grounding: z
      .object({ path: z.string(), grounded: z.boolean(), cited_ids: z.array(z.string()) })
      .nullable()
      .describe('For an agent with a grounding policy: the path its answer took'),
    field_scores: z
      .array(
        z.object({
          field_id: z.string(),
          expected: z.unknown(),
          predicted: z.unknown(),
          exact_match: z.boolean(),
          normalized_match: z.boolean().describe('Equal after normalising case, spacing and punctuation; amounts by value'),
        }),
      )
      .nullable()
      .describe('document_recognition items: each reviewed field against the extracted value'),
    generation_usage: tokenUsageSummary,
    judge_usage: tokenUsageSummary,
    latency_ms: z.number().int(),
    created_at: timestamp,
  })
  .meta({ id: 'EvaluationResult' });

export const resultsPage = z.object({ items: z.array(evaluationResult), total: z.number().int(), offset: z.number().int(), limit: z.number().int() });

export const gateBody = z
  .object({
    minimum_items: z.number().int().min(0).optional(),
    score_pass_rate_min: z.number().min(0).max(1).optional(),
    score_f1_min: z.number().min(0).max(1).optional(),
    max_failed_item_ratio: z.number().min(0).max(1).optional(),
    llm_judge_min: z.number().min(0).max(1).optional(),
  })
  .strict();

export const gateVerdict = z
  .object({
    verdict_id: z.string().uuid(),
    run_id: z.string().uuid(),
    passed: z.boolean(),
    policy: z.object({
      minimum_items: z.number().int(),
      score_pass_rate_min: z.number(),
      score_f1_min: z.number(),
      max_failed_item_ratio: z.number(),
      llm_judge_min: z.number(),
    }),
    metrics: z.object({
      items: z.number().int(),
      pass_rate: z.number().nullable(),
      mean_token_f1: z.number().nullable(),
      failed_item_ratio: z.number(),
      mean_judge_score: z.number().nullable(),
    }),
    reasons: z.array(z.string()).describe('One per failed condition, naming it; empty when the run passed'),
    created_at: timestamp,
  })
  .meta({ id: 'EvaluationGateVerdict' });

const slice = z.object({
  value: z.string().nullable().describe('The domain, difficulty or source; null for items without one'),
  item_count: z.number().int(),
  failed_count: z.number().int(),
  exact_match_rate: z.number().nullable(),
  mean_token_f1: z.number().nullable(),
  pass_rate: z.number().nullable(),
  mean_judge_score: z.number().nullable(),
});

export const runSlices = z
  .object({ run_id: z.string().uuid(), by_domain: z.array(slice), by_difficulty: z.array(slice), by_source: z.array(slice) })
  .meta({ id: 'EvaluationRunSlices' });

const compareSide = z
  .object({
    status: z.enum(['succeeded', 'failed']),
    predicted_answer: z.string().nullable(),
    token_f1: z.number().nullable(),
    judge_score: z.number().nullable(),
  })
  .nullable();

export const runComparison = z
  .object({
    baseline_run_id: z.string().uuid(),
    run_id: z.string().uuid(),
    dataset_id: z.string().uuid(),
    summary: z.object({
      improved: z.number().int(),
      regressed: z.number().int(),
      unchanged: z.number().int(),
      unscored: z.number().int(),
      delta_pass_rate: z.number().nullable(),
      delta_mean_token_f1: z.number().nullable(),
      delta_mean_judge_score: z.number().nullable(),
    }),
    items: z.array(
      z.object({
        item_id: z.string().uuid(),
        position: z.number().int(),
        question: z.string(),
        baseline: compareSide,
        candidate: compareSide,
        delta_token_f1: z.number().nullable(),
        delta_judge_score: z.number().nullable(),
        change: z.enum(['improved', 'regressed', 'unchanged', 'unscored']),
      }),
    ),
  })
  .meta({ id: 'EvaluationRunComparison' });
