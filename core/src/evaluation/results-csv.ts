import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { safeCell } from '../services/csv-cell.js';
import type { ResultRow, RunStore } from './run-store.js';

/** Rows read from the database per page while the CSV streams. */
const PAGE = 500;

/** The columns of `results.csv` (spec 4.9), in order. */
export const RESULT_CSV_COLUMNS = [
  'position',
  'item_id',
  'question',
  'expected_answers',
  'predicted_answer',
  'status',
  'error_message',
  'domain',
  'difficulty',
  'source',
  'response_source',
  'exact_match',
  'token_f1',
  'pass_rate',
  'matched_expected_answer_index',
  'judge_status',
  'judge_score',
  'judge_reason',
  'judge_issues',
  'judge_improvement_suggestions',
  'judge_suggested_better_answer',
  'judge_confidence',
  'judge_rubric_version',
  'judge_raw_response_text',
  'rule_score_json',
  'judge_score_json',
  'latency_ms',
  'created_at',
  'generation_input_tokens',
  'generation_output_tokens',
  'generation_total_tokens',
  'generation_usage_source',
  'judge_input_tokens',
  'judge_output_tokens',
  'judge_total_tokens',
  'judge_usage_source',
  'field_scores_json',
] as const;

function cells(row: ResultRow): (string | number)[] {
  const rule = row.rule_score;
  const judge = row.judge_score;
  const values: Record<(typeof RESULT_CSV_COLUMNS)[number], unknown> = {
    position: row.position,
    item_id: row.item_id,
    question: row.question,
    expected_answers: row.expected_answers,
    predicted_answer: row.predicted_answer,
    status: row.status,
    error_message: row.error_message,
    domain: row.domain,
    difficulty: row.difficulty,
    source: row.source,
    response_source: row.response_source,
    exact_match: rule?.exact_match,
    token_f1: rule?.token_f1,
    pass_rate: rule?.pass_rate,
    matched_expected_answer_index: rule?.matched_expected_answer_index,
    judge_status: row.judge_status,
    judge_score: judge?.score,
    judge_reason: judge?.reason,
    judge_issues: judge?.issues,
    judge_improvement_suggestions: judge?.improvement_suggestions,
    judge_suggested_better_answer: judge?.suggested_better_answer,
    judge_confidence: judge?.confidence,
    judge_rubric_version: judge?.rubric_version,
    judge_raw_response_text: judge?.raw_response_text,
    rule_score_json: rule,
    judge_score_json: judge,
    latency_ms: row.latency_ms,
    created_at: row.created_at.toISOString(),
    generation_input_tokens: row.generation_input_tokens,
    generation_output_tokens: row.generation_output_tokens,
    generation_total_tokens: row.generation_total_tokens,
    generation_usage_source: row.generation_usage_source,
    judge_input_tokens: row.judge_input_tokens,
    judge_output_tokens: row.judge_output_tokens,
    judge_total_tokens: row.judge_total_tokens,
    judge_usage_source: row.judge_usage_source,
    field_scores_json: row.field_scores ?? null,
  };
  return RESULT_CSV_COLUMNS.map((column) => safeCell(values[column]));
}

/** The run's stored results as UTF-8 CSV, read from the database a page at a time while the client reads. */
export function resultsCsv(store: RunStore, runId: string): Readable {
  async function* rows() {
    let after = 0;
    for (;;) {
      const page = await store.resultsAfter(runId, after, PAGE);
      for (const row of page) yield cells(row);
      if (page.length < PAGE) return;
      after = page.at(-1)!.position;
    }
  }
  return Readable.from(rows()).pipe(stringify({ header: true, columns: [...RESULT_CSV_COLUMNS], cast: { number: (n) => String(n) } }));
}
