import type { Citation, GroundedAnswer, TurnResult } from '@agent-host/sdk';
import type { AgentView } from '../../agents/agents.js';
import type { HostConfig } from '../../config/schema.js';
import type { TurnTraceExporter } from '../../observability/turn-trace-exporter.js';
import { EMPTY_COST, estimateInteractionCost, type PricingTable } from '../../usage/cost.js';
import { countTurnUsage, type CountedCall, type TokenUsageSummary } from '../../usage/token-usage.js';
import type { ConversationStore } from '../conversation-store.js';
import type { SessionEvents } from '../session-events.js';
import type { RuntimeTurn } from './build-context.js';
import { publishMessages, type OpenTurn } from './open-session.js';
import type { TurnOutcome } from './run-orchestrator.js';
import type { AdmittedTurn, StoredTurn } from './turn-request.js';
import type { TurnTrace } from './turn-trace.js';

export interface SaveStageDeps {
  config: HostConfig;
  conversations: ConversationStore;
  events: SessionEvents;
  /** Prices of the model catalog, for each model call's estimated cost. */
  pricing: PricingTable;
  /** Exports each turn's trace over OTLP when an endpoint is configured. */
  traces?: TurnTraceExporter;
}

export const NO_MODEL_USAGE: TokenUsageSummary = { input_tokens: 0, output_tokens: 0, total_tokens: 0, token_usage_source: 'no_model_invocation' };

/** The turn to store: a fixed response has no runtime; every other reply (quick match included) ran in one. */
export interface FinishedTurn {
  admitted: AdmittedTurn;
  open: OpenTurn;
  trace: TurnTrace;
  outcome: TurnOutcome;
  runtime: RuntimeTurn | null;
}

/**
 * Stage 7, save the turn, once, however it ended: the messages, the turn with its usage and cost, and its context
 * snapshot in one transaction; then the stored messages are shown to the session's watchers and the trace exported.
 */
export async function saveTurn(deps: SaveStageDeps, turn: FinishedTurn): Promise<StoredTurn> {
  const { admitted, open, trace, outcome, runtime } = turn;
  const { identity } = open;
  const counted = runtime ? countTurnUsage(runtime.router.calls) : { summary: NO_MODEL_USAGE, calls: [] as CountedCall[] };
  const usage = counted.summary;
  const finalModel = runtime?.router.finalModel ?? null;
  // A turn that never finished was producing a model reply.
  const result = outcome.result ?? { reply: outcome.streamed, response_source: 'llm_generated', observation: {} };
  const latencyMs = Date.now() - trace.started;
  // A turn cut short (an error, a takeover) has no grounded answer, whatever its runtime began.
  const grounded = outcome.result ? (runtime?.grounding.answer ?? null) : null;
  const stored = await deps.conversations.persistTurn({
    ...identity,
    reply: outcome.result?.reply ?? (outcome.streamed || null),
    orchestrator_key: runtime?.orchestratorKey ?? null,
    response_source: result.response_source,
    status: outcome.status,
    error_message: outcome.failure,
    model: finalModel && { model_name: finalModel.model_name, model_provider: finalModel.model_provider, model_temperature: finalModel.model_temperature },
    usage,
    cost: runtime ? estimateInteractionCost(counted.calls, usage.token_usage_source, deps.pricing) : EMPTY_COST,
    // Fixed responses are not counted in request limits (spec 4.2 rule 4).
    counts_toward_limits: runtime !== null,
    first_token_ms: outcome.firstTokenMs,
    latency_ms: latencyMs,
    // Retrieval already withheld the filenames of an agent that hides them, so the message shows none either.
    reply_metadata: grounded && { citations: grounded.citations, grounding_path: grounded.decision.path },
    context: contextSnapshot(deps.config, deps.traces !== undefined, { agent: admitted.agent, open, trace, usage, result, runtime, grounded }),
    // A fixed response never writes the request's model override to the session.
    override: runtime ? admitted.override : null,
    time_zone: admitted.request.time_zone ?? null,
    ticket_id: open.ticket?.id ?? null,
  });
  open.ticket?.leftWithTurn();
  // A turn that ran showed the customer's message when it started (stage 5); a fixed response shows both now.
  publishMessages(deps.events, identity.session_id, runtime ? stored.filter((m) => m.id !== identity.user_message.id) : stored);
  if (grounded?.decision.path === 'low_confidence_handoff') {
    const reply = stored.find((m) => m.role === 'assistant');
    deps.events.publish({
      type: 'handoff_requested',
      session_id: identity.session_id,
      handoff: {
        turn_id: identity.turn_id,
        message_id: reply?.id ?? null,
        reason: grounded.decision.low_confidence_reason,
        created_at: new Date().toISOString(),
      },
    });
  }
  deps.traces?.export({
    traceId: identity.trace_id,
    turnId: identity.turn_id,
    sessionId: identity.session_id,
    agentId: identity.agent_id,
    startedAt: trace.started,
    latencyMs,
    status: outcome.status,
    responseSource: result.response_source,
    spans: trace.spans,
    modelCalls: (runtime?.router.calls ?? []).map((call, i) => ({
      ...counted.calls[i]!,
      start_ms: (call.started_at ?? trace.started) - trace.started,
      ms: (call.ended_at ?? Date.now()) - (call.started_at ?? trace.started),
    })),
  });
  return { session_id: identity.session_id, turn_id: identity.turn_id, usage };
}

/** The turn context snapshot (spec 2.2). */
function contextSnapshot(
  config: HostConfig,
  exported: boolean,
  input: {
    agent: AgentView | null;
    open: OpenTurn;
    trace: TurnTrace;
    usage: TokenUsageSummary;
    result: TurnResult;
    runtime: RuntimeTurn | null;
    grounded: GroundedAnswer | null;
  },
) {
  const { result, runtime, trace } = input;
  const template = config.observability.trace_url_template;
  return {
    observability_schema_version: 'v2',
    context_payload: {
      message_type: input.open.messageType,
      agent_id: input.agent?.agent_id ?? null,
      response_source: result.response_source,
      observation: { ...runtime?.tools.observation, ...result.observation },
      model_routing: runtime?.router.routingRecord() ?? null,
      trace_spans: trace.spans,
      // The turn's trace id, whether it was exported, and where a person opens it (`[observability]`).
      trace: { trace_id: trace.traceId, exported, url: template ? template.replaceAll('{trace_id}', trace.traceId) : null },
      retrieval: runtime?.retrieval.summary() ?? [],
      // The grounding decision with every piece of evidence (filenames included) and the citations (issue 20).
      grounding: input.grounded && withFilenames(input.grounded, runtime),
    },
    rag_context: runtime?.retrieval.ragContext() ?? [],
    skill_context: runtime?.skills.skillContext() ?? [],
    mcp_context: runtime?.tools.context ?? [],
    turn: { response_source: result.response_source, generation_usage: input.usage },
    skill_calls: runtime?.skills.calls() ?? [],
    mcp_calls: runtime?.tools.calls ?? [],
  };
}

/**
 * The grounding decision for the turn context, with each document's filename: retrieval hands the runtime no
 * filename when the agent hides them from the model, but the turn context, like `rag_context`, keeps them.
 */
function withFilenames(grounded: GroundedAnswer, runtime: RuntimeTurn | null) {
  const filenames = new Map((runtime?.retrieval.ragContext() ?? []).map((chunk) => [chunk.document_id, chunk.document_filename]));
  const named = (c: Citation): Citation => ({ ...c, document_filename: c.document_filename ?? (c.document_id && filenames.get(c.document_id)) ?? null });
  return { ...grounded.decision, evidence: grounded.decision.evidence.map(named), citations: grounded.citations.map(named) };
}
