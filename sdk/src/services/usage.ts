/**
 * Where a token count came from (spec 2.5).
 * @public
 */
export type TokenUsageSource = 'provider_reported' | 'tokenizer_estimated' | 'no_model_invocation' | 'unavailable';

/** Token counts of one model call, as reported by the provider when it can. @public */
export interface ModelCallUsage {
  model_provider: string;
  model_name: string;
  input_tokens: number;
  output_tokens: number;
  source: TokenUsageSource;
}

/** What the usage belongs to: a turn, a scheduled run, an evaluation item... @public */
export interface UsageScope {
  scope_kind: string;
  scope_id: string;
}

/**
 * Records model usage so that turns, runs and evaluations can report tokens
 * and cost. Estimation is local (`js-tiktoken`) and works offline.
 * @public
 */
export interface UsageRecorder {
  /** Persists one model call's usage under a scope. */
  record(scope: UsageScope, usage: ModelCallUsage): Promise<void>;
  /** Local token estimate for a text; `undefined` when estimation fails. */
  estimateTokens(text: string): number | undefined;
}
