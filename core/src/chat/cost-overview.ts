import { NotFoundError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { estimateCost, type EstimatedCostSummary, type PricingTable } from '../usage/cost.js';
import { rollupUsage, type TokenUsageSummary } from '../usage/token-usage.js';

interface UsageGroup {
  model_provider: string | null;
  model_name: string | null;
  token_usage_source: TokenUsageSummary['token_usage_source'];
  input_tokens: string;
  output_tokens: string;
  interactions: string;
}

const EMPTY_COST: EstimatedCostSummary = { input_cost_usd: 0, output_cost_usd: 0, total_cost_usd: 0, estimated_interaction_count: 0, missing_pricing_count: 0 };

function addCosts(...costs: EstimatedCostSummary[]): EstimatedCostSummary {
  const sum = (key: keyof EstimatedCostSummary) => costs.reduce((total, c) => total + c[key], 0);
  const usd = (key: keyof EstimatedCostSummary) => Math.round(sum(key) * 1e6) / 1e6;
  return {
    input_cost_usd: usd('input_cost_usd'),
    output_cost_usd: usd('output_cost_usd'),
    total_cost_usd: usd('total_cost_usd'),
    estimated_interaction_count: sum('estimated_interaction_count'),
    missing_pricing_count: sum('missing_pricing_count'),
  };
}

/**
 * `GET /agents/{agent_id}/cost-overview` (spec 4.7), summed in SQL by
 * (model, usage source). Evaluation rollups stay zero until evaluation runs
 * exist; estimated costs are internal figures in USD.
 */
export async function agentCostOverview(db: Sequelize, pricing: PricingTable, agentId: string) {
  const [agent] = await db.query<{ max_total_requests: string | null }>('SELECT max_total_requests FROM agents WHERE id::text = $1', {
    bind: [agentId],
    type: QueryTypes.SELECT,
  });
  if (!agent) throw new NotFoundError(`agent ${agentId} not found`);
  const groups = await db.query<UsageGroup>(
    `SELECT model_provider, model_name, token_usage_source, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, count(*) AS interactions
     FROM conversation_turns WHERE agent_id = $1 GROUP BY model_provider, model_name, token_usage_source`,
    { bind: [agentId], type: QueryTypes.SELECT },
  );
  const [counts] = await db.query<{ total: string; active: string }>(
    `SELECT (SELECT count(*) FROM conversation_turns WHERE agent_id = $1 AND counts_toward_limits) AS total,
            (SELECT count(*) FROM agent_request_leases WHERE agent_id = $1 AND expires_at > now()) AS active`,
    { bind: [agentId], type: QueryTypes.SELECT },
  );
  const summaries = groups.map((g) => ({
    input_tokens: Number(g.input_tokens),
    output_tokens: Number(g.output_tokens),
    total_tokens: Number(g.input_tokens) + Number(g.output_tokens),
    token_usage_source: g.token_usage_source,
    interactions: Number(g.interactions),
  }));
  const conversationCost = estimateCost(
    groups.map((g, i) => ({ model_provider: g.model_provider ?? '', model_name: g.model_name ?? '', usage: summaries[i]!, interactions: summaries[i]!.interactions })),
    pricing,
  );
  const total = Number(counts!.total);
  const max = agent.max_total_requests === null ? null : Number(agent.max_total_requests);
  return {
    agent_id: agentId,
    conversation_usage_rollup: rollupUsage(summaries),
    evaluation_generation_usage_rollup: rollupUsage([]),
    evaluation_judge_usage_rollup: rollupUsage([]),
    conversation_estimated_cost: conversationCost,
    evaluation_generation_estimated_cost: EMPTY_COST,
    evaluation_judge_estimated_cost: EMPTY_COST,
    combined_estimated_cost: addCosts(conversationCost, EMPTY_COST, EMPTY_COST),
    active_request_count: Number(counts!.active),
    total_request_count: total,
    remaining_total_requests: max === null ? null : Math.max(0, max - total),
  };
}
