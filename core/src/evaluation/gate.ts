import type { HostConfig } from '../config/schema.js';

/** A gate policy (spec 4.9): `[evaluation.gate]` defaults with the request's overrides. */
export type GatePolicy = HostConfig['evaluation']['gate'];

/** What a gate judges a finished run by. */
export interface GateMetrics {
  items: number;
  pass_rate: number | null;
  mean_token_f1: number | null;
  failed_item_ratio: number;
  mean_judge_score: number | null;
}

const percent = (value: number) => `${Math.round(value * 1000) / 10}%`;

/** Every condition the run fails, in words; none means it passes. A metric with nothing to measure fails its condition. */
export function gateReasons(policy: GatePolicy, metrics: GateMetrics): string[] {
  const reasons: string[] = [];
  if (metrics.items < policy.minimum_items) reasons.push(`minimum_items: ${metrics.items} items were scored; at least ${policy.minimum_items} are required`);
  const atLeast = (name: keyof GatePolicy, value: number | null, min: number, what: string) => {
    if (value === null) reasons.push(`${name}: no ${what} to compare with ${min}`);
    else if (value < min) reasons.push(`${name}: ${what} ${value} is below ${min}`);
  };
  atLeast('score_pass_rate_min', metrics.pass_rate, policy.score_pass_rate_min, 'pass rate');
  atLeast('score_f1_min', metrics.mean_token_f1, policy.score_f1_min, 'mean token F1');
  atLeast('llm_judge_min', metrics.mean_judge_score, policy.llm_judge_min, 'mean judge score');
  if (metrics.failed_item_ratio > policy.max_failed_item_ratio) {
    reasons.push(`max_failed_item_ratio: ${percent(metrics.failed_item_ratio)} of the items failed; at most ${percent(policy.max_failed_item_ratio)} may`);
  }
  return reasons;
}
