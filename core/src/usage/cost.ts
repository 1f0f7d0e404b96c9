// Estimated cost of spec 2.5 (`EstimatedCostSummary`) from token usage and the
// unit prices of `[[models.catalog]]`. Figures are internal estimates in USD.
import type { HostConfig } from '../config/schema.js';
import type { TokenUsageSource } from '@agent-host/sdk';
import type { CountedCall, TokenUsageSummary } from './token-usage.js';

/** Unit prices of one model, USD per 1,000,000 tokens; either may be unset. */
export interface ModelPrices {
  input_price_per_million_tokens?: number | undefined;
  output_price_per_million_tokens?: number | undefined;
}

/** Prices by (model_provider, model_name); build keys with `pricingKey`. */
export type PricingTable = ReadonlyMap<string, ModelPrices>;

/** One interaction (turn, run, evaluation item) to price: the model it used and its usage. */
export interface CostEntry {
  model_provider: string;
  model_name: string;
  usage: Pick<TokenUsageSummary, 'input_tokens' | 'output_tokens' | 'token_usage_source'>;
  /** How many interactions this entry's usage sums up (a grouped query); default 1. */
  interactions?: number;
}

/** `EstimatedCostSummary` of spec 2.5. */
export interface EstimatedCostSummary {
  input_cost_usd: number;
  output_cost_usd: number;
  total_cost_usd: number;
  estimated_interaction_count: number;
  missing_pricing_count: number;
}

/** The `PricingTable` key of a (model_provider, model_name) pair. */
export function pricingKey(model_provider: string, model_name: string): string {
  return JSON.stringify([model_provider, model_name]);
}

/**
 * The prices configured on `[[models.catalog]]` entries, by (model_provider,
 * model_name); the first entry of a pair wins. Entries without any price are
 * left out.
 */
export function pricingFromConfig(config: { models: Pick<HostConfig['models'], 'catalog'> }): PricingTable {
  const table = new Map<string, ModelPrices>();
  for (const model of config.models.catalog) {
    const { input_price_per_million_tokens, output_price_per_million_tokens } = model;
    if (input_price_per_million_tokens === undefined && output_price_per_million_tokens === undefined) continue;
    const key = pricingKey(model.model_provider, model.model_name);
    if (!table.has(key)) table.set(key, { input_price_per_million_tokens, output_price_per_million_tokens });
  }
  return table;
}

// Exact arithmetic: prices are scaled to integers of 1e-9 USD per million
// tokens, so a token count times a price is an integer of 1e-15 USD, summed
// as a bigint and rounded (half up) to 1e-6 USD only at the end.
const PRICE_SCALE = 1_000_000_000n;
const MICRO_USD_DIVISOR = PRICE_SCALE; // 1e-15 USD -> 1e-6 USD

const isPrice = (p: unknown): p is number => typeof p === 'number' && Number.isFinite(p) && p >= 0;
const scaledPrice = (p: number) => BigInt(Math.round(p * Number(PRICE_SCALE)));
const tokens = (n: number) => (Number.isFinite(n) && n > 0 ? BigInt(Math.round(n)) : 0n);
const toUsd = (femtoUsd: bigint) => Number((femtoUsd + MICRO_USD_DIVISOR / 2n) / MICRO_USD_DIVISOR) / 1_000_000;

/**
 * Estimated cost of many interactions. An interaction is priced only when its
 * (model_provider, model_name) pair has both unit prices configured; otherwise
 * it counts in `missing_pricing_count`. `no_model_invocation` interactions
 * cost 0 and are neither estimated nor missing. An `unavailable` interaction
 * (token counts unknown) with both prices is not estimated either: it counts
 * in neither figure (a rollup's `unavailable_count` reports it). The three
 * costs are rounded to 6 decimals once, from the exact sums; the total is
 * rounded from the exact input + output sum.
 */
export function estimateCost(entries: Iterable<CostEntry>, pricing: PricingTable): EstimatedCostSummary {
  let input = 0n;
  let output = 0n;
  let estimated_interaction_count = 0;
  let missing_pricing_count = 0;
  for (const entry of entries) {
    if (entry.usage.token_usage_source === 'no_model_invocation') continue;
    const prices = pricing.get(pricingKey(entry.model_provider, entry.model_name));
    if (!prices || !isPrice(prices.input_price_per_million_tokens) || !isPrice(prices.output_price_per_million_tokens)) {
      missing_pricing_count += entry.interactions ?? 1;
      continue;
    }
    if (entry.usage.token_usage_source === 'unavailable') continue;
    input += tokens(entry.usage.input_tokens) * scaledPrice(prices.input_price_per_million_tokens);
    output += tokens(entry.usage.output_tokens) * scaledPrice(prices.output_price_per_million_tokens);
    estimated_interaction_count += entry.interactions ?? 1;
  }
  return {
    input_cost_usd: toUsd(input),
    output_cost_usd: toUsd(output),
    total_cost_usd: toUsd(input + output),
    estimated_interaction_count,
    missing_pricing_count,
  };
}

/** The cost summary of nothing estimated. */
export const EMPTY_COST: EstimatedCostSummary = {
  input_cost_usd: 0,
  output_cost_usd: 0,
  total_cost_usd: 0,
  estimated_interaction_count: 0,
  missing_pricing_count: 0,
};

/**
 * Estimated cost of ONE interaction (a chat turn) whose model calls may use
 * different models: each call is priced at its own (model_provider,
 * model_name) and the costs are summed. The interaction is estimated only
 * when every call's model is priced; otherwise it costs nothing and counts
 * once in `missing_pricing_count`, as a single-model interaction would. `source`
 * is the interaction's `token_usage_source` (see {@link estimateCost}).
 */
export function estimateInteractionCost(calls: readonly CountedCall[], source: TokenUsageSource, pricing: PricingTable): EstimatedCostSummary {
  const perCall = estimateCost(
    calls.map((c) => ({
      model_provider: c.model_provider,
      model_name: c.model_name,
      usage: { input_tokens: c.input_tokens, output_tokens: c.output_tokens, token_usage_source: source },
    })),
    pricing,
  );
  if (perCall.missing_pricing_count > 0) return { ...EMPTY_COST, missing_pricing_count: 1 };
  return perCall.estimated_interaction_count > 0 ? { ...perCall, estimated_interaction_count: 1 } : EMPTY_COST;
}
