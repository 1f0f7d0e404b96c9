// Token usage arithmetic of spec 2.5: one record (`TokenUsageSummary`) per
// turn, scheduled run or evaluation item, and rollups over many records.
// Pure functions; the chat turn, scheduled runs, evaluations and the cost
// overview all use these so the write rules are applied in one place.
import type { TokenUsageSource } from '@agent-host/sdk';
import { estimateTokens } from './token-estimate.js';

/** Input and output token counts of one model call. */
export interface TokenCounts {
  input_tokens: number;
  output_tokens: number;
}

/**
 * One model call of a turn (or run, or evaluation item), as the summary needs
 * it. Token counts come, in this order, from `provider_usage`, from
 * `local_estimate`, or from estimating `prompt_text` and `reply_text`.
 */
export interface ModelCall {
  model_provider: string;
  model_name: string;
  /** When the call started and ended (epoch ms), for the exported trace. */
  started_at?: number;
  ended_at?: number;
  /**
   * The usage the provider reported for this call; absent or null when it
   * reported none. Counts that are not non-negative integers count as not
   * reported.
   */
  provider_usage?: TokenCounts | null;
  /**
   * A local tokenizer estimate already made for this call, for example a
   * stored `model_usage_events` row with `token_usage_source =
   * 'tokenizer_estimated'` (stored rows keep no texts).
   */
  local_estimate?: TokenCounts | null;
  /** The prompt as sent to the model (messages joined), for the local estimate. */
  prompt_text?: string;
  /** The model's reply, for the local estimate. */
  reply_text?: string;
}

/** `TokenUsageSummary` of spec 2.5. */
export interface TokenUsageSummary {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  token_usage_source: TokenUsageSource;
}

/** `TokenUsageRollup` of spec 2.5. */
export interface TokenUsageRollup {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  provider_reported_count: number;
  tokenizer_estimated_count: number;
  no_model_invocation_count: number;
  unavailable_count: number;
}

/** Local token estimate of a text; `undefined` (or a throw) means it failed. */
export type TokenEstimator = (text: string) => number | undefined;

const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const validCounts = (c: TokenCounts | null | undefined): c is TokenCounts => !!c && isCount(c.input_tokens) && isCount(c.output_tokens);

function summary(input_tokens: number, output_tokens: number, token_usage_source: TokenUsageSource): TokenUsageSummary {
  return { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens, token_usage_source };
}

function estimateText(text: string | undefined, estimate: TokenEstimator): number | undefined {
  if (text === undefined) return undefined; // nothing to estimate from: the estimate fails
  try {
    const n = estimate(text);
    return isCount(n) ? n : undefined;
  } catch {
    return undefined;
  }
}

/** Counts of a call the provider did not report, or `undefined` when estimation fails. */
function locallyEstimated(call: ModelCall, estimate: TokenEstimator): TokenCounts | undefined {
  if (validCounts(call.local_estimate)) return call.local_estimate;
  const input_tokens = estimateText(call.prompt_text, estimate);
  const output_tokens = estimateText(call.reply_text, estimate);
  return input_tokens === undefined || output_tokens === undefined ? undefined : { input_tokens, output_tokens };
}

/** One model call's token counts as its turn's summary counted them, with the model that made them. */
export interface CountedCall extends TokenCounts {
  model_provider: string;
  model_name: string;
}

/**
 * Summarizes the model calls of one turn (or run, or evaluation item) by the
 * write rules of spec 2.5:
 * - no model call (deterministic or no-model path): 0 tokens, `no_model_invocation`;
 * - every call provider-reported: the provider's sums, `provider_reported`;
 * - some calls provider-reported and some not: the WHOLE record is
 *   `tokenizer_estimated`; reported calls keep the provider's counts and the
 *   others are estimated locally;
 * - no call reported: local estimate of every call, `tokenizer_estimated`;
 * - any local estimate fails (estimator returns undefined or throws, or a
 *   text to estimate is missing): `unavailable` with 0 tokens. Zeros rather
 *   than nulls keep every summary's counts numeric so rollups and cost add
 *   them as they are; `token_usage_source` (and `unavailable_count` in a
 *   rollup) is what tells a reader the counts are unknown.
 *
 * `estimate` defaults to the local js-tiktoken `estimateTokens`.
 */
export function summarizeTurnUsage(calls: readonly ModelCall[], estimate: TokenEstimator = estimateTokens): TokenUsageSummary {
  return countTurnUsage(calls, estimate).summary;
}

/**
 * {@link summarizeTurnUsage}, and each call's counts as summed into it (all 0
 * when the record is `unavailable`), so each call can be priced at its own model.
 */
export function countTurnUsage(calls: readonly ModelCall[], estimate: TokenEstimator = estimateTokens): { summary: TokenUsageSummary; calls: CountedCall[] } {
  const counted = (counts: (index: number) => TokenCounts): CountedCall[] =>
    calls.map((c, i) => ({ model_provider: c.model_provider, model_name: c.model_name, ...counts(i) }));
  if (calls.length === 0) return { summary: summary(0, 0, 'no_model_invocation'), calls: [] };
  const perCall: TokenCounts[] = [];
  let allReported = true;
  for (const call of calls) {
    if (validCounts(call.provider_usage)) {
      perCall.push(call.provider_usage);
      continue;
    }
    allReported = false;
    const counts = locallyEstimated(call, estimate);
    if (!counts) return { summary: summary(0, 0, 'unavailable'), calls: counted(() => ({ input_tokens: 0, output_tokens: 0 })) };
    perCall.push(counts);
  }
  const input = perCall.reduce((n, c) => n + c.input_tokens, 0);
  const output = perCall.reduce((n, c) => n + c.output_tokens, 0);
  return {
    summary: summary(input, output, allReported ? 'provider_reported' : 'tokenizer_estimated'),
    calls: counted((i) => ({ input_tokens: perCall[i]!.input_tokens, output_tokens: perCall[i]!.output_tokens })),
  };
}

const EMPTY_ROLLUP: TokenUsageRollup = {
  input_tokens: 0,
  output_tokens: 0,
  total_tokens: 0,
  provider_reported_count: 0,
  tokenizer_estimated_count: 0,
  no_model_invocation_count: 0,
  unavailable_count: 0,
};

const COUNT_FIELD = {
  provider_reported: 'provider_reported_count',
  tokenizer_estimated: 'tokenizer_estimated_count',
  no_model_invocation: 'no_model_invocation_count',
  unavailable: 'unavailable_count',
} as const satisfies Record<TokenUsageSource, keyof TokenUsageRollup>;

/**
 * Adds up many summaries: token sums (an `unavailable` record adds its 0s)
 * and how many records have each `token_usage_source`. A summary with an
 * unknown source counts as `unavailable`. A summary may stand for
 * `interactions` records already summed (a grouped query), default 1.
 */
export function rollupUsage(summaries: Iterable<TokenUsageSummary & { interactions?: number }>): TokenUsageRollup {
  const rollup = { ...EMPTY_ROLLUP };
  for (const s of summaries) {
    rollup.input_tokens += s.input_tokens;
    rollup.output_tokens += s.output_tokens;
    rollup.total_tokens += s.input_tokens + s.output_tokens;
    rollup[COUNT_FIELD[s.token_usage_source] ?? 'unavailable_count'] += s.interactions ?? 1;
  }
  return rollup;
}
