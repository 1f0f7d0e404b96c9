import { randomUUID } from 'node:crypto';
import type { ChatModel, GroundingDecision } from '@agent-host/sdk';
import type { AgentView } from '../../agents/agents.js';
import { newTraceId } from '../../observability/trace-id.js';
import { EMPTY_COST, estimateInteractionCost, type EstimatedCostSummary, type PricingTable } from '../../usage/cost.js';
import { countTurnUsage, type TokenUsageSummary } from '../../usage/token-usage.js';
import { TurnModelRouter, type ModelOverride } from '../model-router.js';
import { buildTurnContext, toSnapshot, type ContextStageDeps } from './build-context.js';
import type { OpenTurn } from './open-session.js';
import { runtimeEvents } from './run-orchestrator.js';
import { NO_MODEL_USAGE } from './save-turn.js';
import { fixedResponse } from './shortcuts.js';
import type { AdmittedTurn } from './turn-request.js';
import { TurnTrace } from './turn-trace.js';

/** What one evaluated turn answered, what it cost, and what its grounding decided. */
export interface EvaluatedTurn {
  reply: string;
  response_source: string | null;
  usage: TokenUsageSummary;
  /** Its model calls priced by the model catalog, as a chat turn's are. */
  cost: EstimatedCostSummary;
  grounding: GroundingDecision | null;
  /** Why the turn failed (its model failed or timed out), else null. */
  error: string | null;
}

/**
 * An evaluation item's turn: the agent's fixed responses, then its runtime with its knowledge, skills and tools, as a
 * chat turn runs them, but in a session of its own id that is never stored (`sessionId`), with no history, counted
 * toward no limit and persisted nowhere (tool and skill calls keep their audits, naming that session id).
 */
/** What an evaluation turn needs of the chat pipeline: building a turn context, and the catalog's prices. */
export type EvaluationDeps = ContextStageDeps & { pricing: PricingTable };

export async function evaluateTurn(
  deps: EvaluationDeps,
  input: { agent: AgentView; message: string; override: ModelOverride | null; sessionId: string; signal: AbortSignal },
): Promise<EvaluatedTurn> {
  const { agent, message, sessionId } = input;
  const fixed = fixedResponse(agent, 'user_chat', message);
  if (fixed) return { reply: fixed.reply, response_source: fixed.response_source, usage: NO_MODEL_USAGE, cost: EMPTY_COST, grounding: null, error: null };
  const admitted: AdmittedTurn = {
    request: { message, agent_id: agent.agent_id },
    caller: { principal: undefined, callerKey: null, channel: 'evaluation' },
    agent,
    override: input.override,
    trusted: true,
    ticket: null,
    turnId: randomUUID(),
  };
  const now = new Date().toISOString();
  const trace = new TurnTrace(newTraceId(), Date.now());
  const open: OpenTurn = {
    session: {
      id: sessionId,
      opened_at: now,
      agent_id: agent.agent_id,
      status: 'AI_ACTIVE',
      model_name: null,
      model_provider: null,
      model_temperature: null,
      time_zone: null,
    },
    history: [],
    messageType: 'user_chat',
    identity: {
      turn_id: admitted.turnId,
      session_id: sessionId,
      agent_id: agent.agent_id,
      message_type: 'user_chat',
      user_message: { id: randomUUID(), created_at: now },
      user_text: message,
      caller_key: null,
      trace_id: trace.traceId,
    },
    // Evaluation items count toward no quota.
    callerTurnsToday: null,
    ticket: null,
  };
  const runtime = buildTurnContext(deps, admitted, open, trace, input.signal);
  let reply = '';
  let result;
  let error: string | null = null;
  try {
    const events = runtimeEvents(runtime, 'evaluation', trace);
    for (;;) {
      const step = await events.next();
      if (step.done) {
        result = step.value;
        break;
      }
      if (step.value.type === 'token') reply += step.value.content;
      else error = step.value.content;
    }
  } catch (failure) {
    error = (failure as Error).message;
  }
  const counted = countTurnUsage(runtime.router.calls);
  return {
    reply: result?.reply ?? reply,
    response_source: result?.response_source ?? null,
    usage: counted.summary,
    cost: estimateInteractionCost(counted.calls, counted.summary.token_usage_source, deps.pricing),
    grounding: result ? (runtime.grounding.answer?.decision ?? null) : null,
    error: result ? null : (error ?? 'the turn ended without a reply'),
  };
}

/**
 * The model that judges an evaluation item: the run's explicit model, else the agent's primary model (else the
 * host's default), as the `general` routing stage resolves it; `usage` counts its calls by the same write rules.
 */
export function judgeModel(deps: EvaluationDeps, agent: AgentView, override: ModelOverride | null): JudgeModel {
  const snapshot = { ...toSnapshot(agent, agent.orchestrator_key ?? deps.config.agent.default_orchestrator_key), model_routing_config: null };
  const router = new TurnModelRouter(snapshot, override, deps.config, deps.providers, { message: '' });
  return {
    model: router.chatModel('general'),
    spent: () => {
      const counted = countTurnUsage(router.calls);
      return { usage: counted.summary, cost: estimateInteractionCost(counted.calls, counted.summary.token_usage_source, deps.pricing) };
    },
  };
}

/** The judge of an evaluation item, and what its calls used and cost by the same rules as a turn's. */
export interface JudgeModel {
  model: ChatModel;
  spent: () => { usage: TokenUsageSummary; cost: EstimatedCostSummary };
}
