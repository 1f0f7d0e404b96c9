import type { AgentSnapshot, Logger, ModelProvider, Orchestrator, TurnContext } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { AgentView } from '../../agents/agents.js';
import type { HostConfig } from '../../config/schema.js';
import type { Knowledge } from '../../knowledge/knowledge.js';
import type { TurnRetrieval } from '../../knowledge/turn-retrieval.js';
import type { Mcp } from '../../mcp/mcp.js';
import type { ScheduledTasks } from '../../scheduled-tasks/scheduled-tasks.js';
import { turnScheduling } from '../../scheduled-tasks/turn-scheduling.js';
import type { TurnTools } from '../../mcp/pipeline/turn-tools.js';
import type { Skills } from '../../skills/skills.js';
import type { TurnSkills } from '../../skills/turn-skills.js';
import type { ConversationStore } from '../conversation-store.js';
import { agentText } from '../fixed-response.js';
import { TurnModelRouter, type ModelOverride } from '../model-router.js';
import { ToolCallBudget } from '../tool-budget.js';
import type { OpenTurn } from './open-session.js';
import { refusal, type AdmittedTurn } from './turn-request.js';
import type { TurnTrace } from './turn-trace.js';
import { turnGrounding, type TurnGrounding } from './turn-grounding.js';

export interface ContextStageDeps {
  config: HostConfig;
  conversations: ConversationStore;
  orchestrators: KeyedRegistry<Orchestrator>;
  providers: KeyedRegistry<ModelProvider>;
  /** Retrieval over the agent's mounted sources. */
  knowledge: Pick<Knowledge, 'turnRetrieval'>;
  /** The agent's mounted skills. */
  skills: Pick<Skills, 'turnSkills'>;
  /** The agent's mounted MCP tools: the tool handle, the MCP pipeline and quick match. */
  mcp: Pick<Mcp, 'turnTools'>;
  /** Scheduled tasks of the agent and session, for the scheduler stage. */
  scheduledTasks: ScheduledTasks;
  logger: Logger;
}

/** A turn ready for its runtime: the context the orchestrator gets, and the parts that record what the turn used. */
export interface RuntimeTurn {
  orchestratorKey: string;
  orchestrator: Orchestrator;
  context: TurnContext;
  router: TurnModelRouter;
  retrieval: TurnRetrieval;
  skills: TurnSkills;
  tools: TurnTools;
  /** The agent's grounding policy, and the answer it produced. */
  grounding: TurnGrounding;
  /** Aborted when an operator takes the session over before a model call. */
  takenOver: AbortSignal;
}

export const TAKEN_OVER = 'a human operator took over the session';

/**
 * Stage 5, build the turn context: the agent's runtime (refused when this host does not have it), its models with the
 * turn's override, and its knowledge, skills and tools, all sharing one tool-call budget and the turn's trace.
 */
export function buildTurnContext(deps: ContextStageDeps, admitted: AdmittedTurn, open: OpenTurn, trace: TurnTrace, signal: AbortSignal): RuntimeTurn {
  const { config, conversations } = deps;
  const { agent, request } = admitted;
  const { identity, session, history, messageType } = open;
  const chatAgent = agent?.agent_type === 'chat' ? agent : null;
  const orchestratorKey = chatAgent?.orchestrator_key ?? config.agent.default_orchestrator_key;
  const orchestrator = deps.orchestrators.get(orchestratorKey);
  if (!orchestrator) throw refusal('RUNTIME_UNAVAILABLE', `the chat runtime "${orchestratorKey}" is not available on this host`);
  // Stopped by the client going away, or by an operator taking over before a model call.
  const takeover = new AbortController();
  // Only agents with human_takeover_enabled can be taken over (spec 3.1); other turns skip the round trip, and the
  // combined signal (AbortSignal.any, some 20 µs of CPU a call on Node 20).
  const beforeModelCall = agent?.human_takeover_enabled
    ? async () => {
        if ((await conversations.status(identity.session_id)) !== 'HUMAN_ACTIVE') return;
        takeover.abort();
        throw new Error(TAKEN_OVER);
      }
    : undefined;
  const turnSignal = beforeModelCall ? AbortSignal.any([signal, takeover.signal]) : signal;
  // A session keeps the override it was given, as if the request had repeated it.
  const override: ModelOverride | null =
    admitted.override ??
    (session.model_provider || session.model_name
      ? {
          model_name: session.model_name ?? undefined,
          model_provider: session.model_provider ?? undefined,
          model_temperature: session.model_temperature ?? undefined,
        }
      : null);
  const snapshot = agent ? toSnapshot(agent, orchestratorKey) : null;
  // What the turn's stages and plugins log names its request by hand: the route runs outside the request scope.
  const { requestId } = admitted.caller;
  const log = deps.logger.child({ ...(requestId && { req_id: requestId }), trace_id: identity.trace_id, turn_id: identity.turn_id });
  const router = new TurnModelRouter(snapshot, override, config, deps.providers, { message: request.message, beforeModelCall, log });
  const ids = { sessionId: identity.session_id, turnId: identity.turn_id, traceId: identity.trace_id };
  // One budget per turn: skill and MCP executions both count toward max_tool_calls_total_per_request (spec 8).
  const budget = new ToolCallBudget(agent?.max_tool_calls_total_per_request ?? null);
  const retrieval = deps.knowledge.turnRetrieval(chatAgent, log);
  const skills = deps.skills.turnSkills({ agentId: chatAgent?.agent_id ?? null, ...ids, budget, signal: turnSignal, log });
  const tools = deps.mcp.turnTools({
    agent: chatAgent,
    ...ids,
    message: request.message,
    messageType,
    history,
    models: router,
    trace,
    budget,
    signal: turnSignal,
  });
  const grounding = turnGrounding(chatAgent, messageType, config, log);
  const context: TurnContext = {
    agent: snapshot ?? defaultSnapshot(orchestratorKey),
    session_id: identity.session_id,
    turn_id: identity.turn_id,
    message: agentText(messageType, request.message),
    message_type: messageType,
    history,
    recent_user_messages: tools.userHistory,
    models: router,
    retrieval: retrieval.handle,
    tools: tools.handle,
    skills: skills.handle,
    scheduling: turnScheduling(deps.scheduledTasks, {
      agentId: chatAgent?.agent_id ?? null,
      sessionId: identity.session_id,
      caller: admitted.caller,
      trace,
      timeZone: request.time_zone ?? session.time_zone,
    }),
    grounding: grounding.handle,
    trace,
    log,
    signal: turnSignal,
  };
  return { orchestratorKey, orchestrator, context, router, retrieval, skills, tools, grounding, takenOver: takeover.signal };
}

export function toSnapshot(agent: AgentView, orchestratorKey: string): AgentSnapshot {
  return {
    agent_id: agent.agent_id,
    name: agent.name as string,
    agent_type: agent.agent_type as AgentSnapshot['agent_type'],
    orchestrator_key: orchestratorKey,
    system_prompt: agent.system_prompt,
    model_name: agent.model_name as string | null,
    model_provider: agent.model_provider as string | null,
    model_temperature: agent.model_temperature as number | null,
    hide_rag_source_filename: agent.hide_rag_source_filename,
    model_routing_config: agent.model_routing_config as Record<string, unknown> | null,
    mcp_response_config: agent.mcp_response_config as Record<string, unknown> | null,
    mcp_runtime_config: agent.mcp_runtime_config as Record<string, unknown> | null,
    response_grounding_config: agent.response_grounding_config as Record<string, unknown> | null,
  };
}

/** Requests without `agent_id` run the default runtime with no agent configuration. */
function defaultSnapshot(orchestratorKey: string): AgentSnapshot {
  return {
    agent_id: '',
    name: '',
    agent_type: 'chat',
    orchestrator_key: orchestratorKey,
    system_prompt: null,
    model_name: null,
    model_provider: null,
    model_temperature: null,
    hide_rag_source_filename: false,
    model_routing_config: null,
    mcp_response_config: null,
    mcp_runtime_config: null,
    response_grounding_config: null,
  };
}
