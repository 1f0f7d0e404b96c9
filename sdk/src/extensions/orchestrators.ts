import type { Logger } from '../services/logger.js';
import type { Evidence, GroundedAnswer, GroundedAnswerRequest, GroundingPolicy } from './grounding.js';
import type { ChatMessage, ChatModel } from './models.js';
import type { SchedulingHandle } from './scheduling.js';
import type { ToolCallOutcome, ToolHandle } from './tools.js';

/** Agent capability boundary (spec 2.4). @public */
export type AgentType = 'chat' | 'etl' | 'document_extraction' | 'fusion';

/** Normalised `message_type` of a turn (unknown values become `other`). @public */
export type MessageType = 'user_chat' | 'form' | 'rule' | 'other';

/** The agent configuration a turn runs with (an immutable copy). @public */
export interface AgentSnapshot {
  agent_id: string;
  name: string;
  agent_type: AgentType;
  orchestrator_key: string;
  system_prompt: string | null;
  model_name: string | null;
  model_provider: string | null;
  model_temperature: number | null;
  hide_rag_source_filename: boolean;
  model_routing_config: Readonly<Record<string, unknown>> | null;
  mcp_response_config: Readonly<Record<string, unknown>> | null;
  mcp_runtime_config: Readonly<Record<string, unknown>> | null;
  response_grounding_config: Readonly<Record<string, unknown>> | null;
}

/**
 * Which model a stage asks for: a `model_routing_config` slot (spec 2.4), or
 * `final` for the reply, where core chooses among the `general`,
 * `complex_task` and `reasoning` slots by the turn's message (spec 4.2 rule 2).
 * @public
 */
export type ModelStage = 'tool_call' | 'general' | 'complex_task' | 'reasoning' | 'final';

/** The model a stage resolved to. @public */
export interface ModelChoice {
  model_name: string;
  model_provider: string;
  model_temperature: number | null;
  /** The routing role that supplied it, for example `explicit_override` or `general_model`. */
  role: string;
}

/**
 * Resolves the model of each stage by the spec's priority (request override,
 * then routing config, then agent primary, then global default) and records every decision
 * in the turn's `context_payload.model_routing`.
 * @public
 */
export interface ModelRouter {
  choose(stage: ModelStage): ModelChoice;
  /** A chat model for the stage; its usage is recorded against the turn. */
  chatModel(stage: ModelStage): ChatModel;
}

/** A retrieved chunk with its source fields. @public */
export interface RetrievedChunk {
  content: string;
  score: number;
  source_id: string;
  source_name: string;
  document_id: string | null;
  document_filename: string | null;
  metadata: Readonly<Record<string, unknown>>;
}

/** Retrieval over the agent's mounted sources only. @public */
export interface RetrievalHandle {
  search(query: string, options?: { topK?: number; threshold?: number }): Promise<RetrievedChunk[]>;
}

/**
 * Why the tool path stopped before a call: a missing or ambiguous identifier
 * (spec 4.13). The final model call should ask the user for it.
 * @public
 */
export interface ToolGuidance {
  /** A required identifier is missing, or several compete. */
  kind: 'missing_arguments' | 'ambiguous_identifier';
  /** The tool the pipeline meant to call. */
  tool_name: string;
  /** The identifier arguments that have no value. */
  missing_identifiers: string[];
  /** The arguments that can carry an identifier. */
  candidate_identifier_arguments: string[];
  /** For `ambiguous_identifier`: the competing values. */
  candidate_identifiers: string[];
  /** What to ask the user, in plain words. */
  message: string;
}

/** A tool result for the final model call to answer from. @public */
export interface ToolResultContext {
  /** The tool that was called. */
  tool_name: string;
  /** How the call ended. */
  status: ToolCallOutcome['status'];
  /** The business payload, or the failure minimum raw JSON (`server_name`, `tool_name`, `status`, `error_message`). */
  result: unknown;
}

/**
 * What core's MCP tool pipeline decided for the turn. `reply`: a direct
 * response or raw passthrough is the whole reply (no final model call).
 * `continue`: the final model call answers, with the tool results and the
 * guidance, if any. `observation` holds the `mcp_*` fields of spec 4.13.
 * @public
 */
export type ToolPipelineResult =
  | { action: 'reply'; reply: string; response_source: string; observation: Record<string, unknown> }
  | { action: 'continue'; tool_results: ToolResultContext[]; guidance: ToolGuidance | null; observation: Record<string, unknown> };

/**
 * The tool handle of a turn. `runPipeline` runs the MCP tool pipeline of
 * spec 4.13 (selection, gates, argument generation, required-argument check,
 * call, response rules), each stage in its own trace span, with audits.
 * @public
 */
export interface TurnToolHandle extends ToolHandle {
  runPipeline(): Promise<ToolPipelineResult>;
}

/** Named spans for the turn trace (for example `mcp-tool-selection-decision`). @public */
export interface Trace {
  readonly traceId: string;
  span<T>(name: string, run: (attributes: Record<string, unknown>) => Promise<T>): Promise<T>;
}

/** The turn's evidence, from its retrieval, tool and skill results. @beta */
export interface EvidenceInput {
  chunks?: readonly RetrievedChunk[];
  tool_results?: readonly ToolResultContext[];
  skill_results?: readonly { name: string; result: unknown }[];
}

/**
 * The grounding policy of a turn. `policy` is null when the agent has none enabled: answer as usual. Otherwise
 * build the evidence with `evidence` and produce the reply with `answer`, which streams the answer's text as `token`
 * events while the model writes it, applies the low-confidence and failure behaviours, and records the decision
 * for core (the turn context and the reply's citations).
 * @beta
 */
export interface GroundingHandle {
  readonly policy: GroundingPolicy | null;
  evidence(input: EvidenceInput): Evidence[];
  answer(request: GroundedAnswerRequest): AsyncGenerator<TurnEvent, GroundedAnswer, void>;
}

/**
 * Everything core hands an orchestrator for one turn.
 * @public
 */
export interface TurnContext {
  agent: AgentSnapshot;
  session_id: string;
  turn_id: string;
  /** The message as the model should see it (non-`user_chat` types carry a `[message_type=...]` prefix). */
  message: string;
  message_type: MessageType;
  /** Bounded recent history, oldest first. */
  history: ChatMessage[];
  /**
   * The user's recent messages before this one, oldest first, as many as
   * `history_user_message_window` allows (spec 4.13; none when it is 0): the
   * history for tool gating and tool argument decisions.
   */
  recent_user_messages: string[];
  models: ModelRouter;
  retrieval: RetrievalHandle;
  tools: TurnToolHandle;
  skills: ToolHandle;
  /**
   * Scheduled tasks of this agent and session.
   * @beta
   */
  scheduling: SchedulingHandle;
  /**
   * The agent's grounding policy (`response_grounding_config`): when `policy` is set, the reply comes from
   * `grounding.answer` over the turn's evidence.
   * @beta
   */
  grounding: GroundingHandle;
  trace: Trace;
  log: Logger;
  /** Aborted when the client disconnects or the turn times out. */
  signal: AbortSignal;
}

/** An event streamed to the client. @public */
export type TurnEvent = { type: 'token'; content: string } | { type: 'error'; content: string };

/** The final reply and its observation fields (`response_source`, `mcp_*`). @public */
export interface TurnResult {
  reply: string;
  response_source: string;
  observation: Record<string, unknown>;
}

/**
 * A chat runtime, registered under its `orchestrator_key`. Core persists the
 * turn, applies fixed responses and limits, and always ends the stream with
 * `done`; the orchestrator only produces events and the result.
 * @public
 */
export interface Orchestrator {
  readonly displayName: string;
  readonly description: string;
  /** Experimental runtimes are offered but never the default. */
  readonly experimental: boolean;
  /**
   * It applies an agent's `response_grounding_config` through `context.grounding`; core refuses a grounding policy
   * on agents of runtimes that do not, and the conformance suite holds those that do to the policy.
   * @beta
   */
  readonly grounding?: boolean;
  run(context: TurnContext): AsyncGenerator<TurnEvent, TurnResult, void>;
}
