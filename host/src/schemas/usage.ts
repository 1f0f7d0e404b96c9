import { z } from 'zod';

/** Token usage and estimated cost as responses show them (spec 2.5); core/src/usage computes them. */

export const tokenUsageSource = z.enum(['provider_reported', 'tokenizer_estimated', 'no_model_invocation', 'unavailable']);

/** `TokenUsageSummary`: one turn's or one call's tokens and where the figures come from. */
export const tokenUsageSummary = z
  .object({ input_tokens: z.number().int(), output_tokens: z.number().int(), total_tokens: z.number().int(), token_usage_source: tokenUsageSource })
  .meta({ id: 'TokenUsageSummary' });

/** `TokenUsageRollup`: many summaries added up, with how many had each source. */
export const tokenUsageRollup = z
  .object({
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    total_tokens: z.number().int(),
    provider_reported_count: z.number().int(),
    tokenizer_estimated_count: z.number().int(),
    no_model_invocation_count: z.number().int(),
    unavailable_count: z.number().int(),
  })
  .meta({ id: 'TokenUsageRollup' });

/** An estimated cost in USD: an internal figure from the pricing table, never an invoice. */
export const estimatedCost = z
  .object({
    input_cost_usd: z.number(),
    output_cost_usd: z.number(),
    total_cost_usd: z.number(),
    estimated_interaction_count: z.number().int(),
    missing_pricing_count: z.number().int().describe('Interactions whose model has no price'),
  })
  .meta({ id: 'EstimatedCostSummary' });
