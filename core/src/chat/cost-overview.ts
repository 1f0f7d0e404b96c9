import { NotFoundError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { AgentStore } from '../agents/agent-store.js';
import { evaluationCosts, evaluationUsage, rollupOf } from '../evaluation/run-store.js';
import type { EstimatedCostSummary } from '../usage/cost.js';
import { rollupUsage, type TokenUsageSummary } from '../usage/token-usage.js';
import { RequestLimitStore } from './request-limit-store.js';

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
 * `GET /agents/{agent_id}/cost-overview` (spec 4.7), summed in SQL by usage
 * source. Costs are the turns' own estimates (each model call priced at its
 * model when the turn ran), the figures the cost limits count. Evaluation
 * rollups and costs add up the agent's evaluation results (answers and
 * judgements), each priced like a turn. Estimated costs are internal figures in USD.
 */
export async function agentCostOverview(db: Sequelize, agentId: string) {
  const agent = await new AgentStore(db).find(agentId);
  if (!agent) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
  const usage = new RequestLimitStore(db);
  const groups = await usage.usageBySource(agentId);
  const counts = await usage.requestCounts(agentId);
  const summaries = groups.map((g) => ({
    input_tokens: Number(g.input_tokens),
    output_tokens: Number(g.output_tokens),
    total_tokens: Number(g.input_tokens) + Number(g.output_tokens),
    token_usage_source: g.token_usage_source as TokenUsageSummary['token_usage_source'],
    interactions: Number(g.interactions),
  }));
  const conversationCost = addCosts(
    ...groups.map((g) => ({
      input_cost_usd: Number(g.input_cost),
      output_cost_usd: Number(g.output_cost),
      total_cost_usd: Number(g.total_cost),
      estimated_interaction_count: Number(g.estimated),
      missing_pricing_count: Number(g.missing),
    })),
  );
  const evaluation = await evaluationUsage(db, { agentId });
  const evaluationCost = await evaluationCosts(db, agentId);
  const total = counts.total;
  const max = agent.max_total_requests === null ? null : Number(agent.max_total_requests);
  return {
    agent_id: agentId,
    conversation_usage_rollup: rollupUsage(summaries),
    evaluation_generation_usage_rollup: rollupOf(evaluation.filter((g) => g.kind === 'generation')),
    evaluation_judge_usage_rollup: rollupOf(evaluation.filter((g) => g.kind === 'judge')),
    conversation_estimated_cost: conversationCost,
    evaluation_generation_estimated_cost: evaluationCost.generation,
    evaluation_judge_estimated_cost: evaluationCost.judge,
    combined_estimated_cost: addCosts(conversationCost, evaluationCost.generation, evaluationCost.judge),
    active_request_count: counts.active,
    total_request_count: total,
    remaining_total_requests: max === null ? null : Math.max(0, max - total),
  };
}

/** One UTC day of an agent's conversation turns: how many, their tokens and their estimated cost (USD, internal). */
export interface DailyUsage {
  date: string;
  turns: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  estimated_cost_usd: number;
}

/**
 * `GET /agents/{agent_id}/usage-by-day`: the agent's turns of the last `days` UTC days, today included, one entry a
 * day (days without a turn count zero), oldest first.
 */
export async function agentUsageByDay(db: Sequelize, agentId: string, days: number) {
  if (!(await new AgentStore(db).find(agentId))) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
  const rows = await new RequestLimitStore(db).usageByDay(agentId, days);
  return {
    agent_id: agentId,
    days: rows.map((row): DailyUsage => ({
      date: row.date,
      turns: Number(row.turns),
      input_tokens: Number(row.input_tokens),
      output_tokens: Number(row.output_tokens),
      total_tokens: Number(row.input_tokens) + Number(row.output_tokens),
      estimated_cost_usd: Math.round(Number(row.cost) * 1e6) / 1e6,
    })),
  };
}
