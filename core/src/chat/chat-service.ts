import { randomBytes, randomUUID } from 'node:crypto';
import {
  AgentHostError,
  ERROR_CODES,
  ValidationError,
  type AgentSnapshot,
  type ChatMessage,
  type ErrorCode,
  type Logger,
  type MessageType,
  type ModelProvider,
  type Orchestrator,
  type Trace,
  type TurnContext,
  type TurnResult,
} from '@agent-host/sdk';
import { z } from 'zod';
import type { AdminPrincipal } from '../admin/admin-auth.js';
import type { Agents, AgentView } from '../agents/agents.js';
import type { HostConfig } from '../config/schema.js';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { Knowledge } from '../knowledge/knowledge.js';
import type { TurnRetrieval } from '../knowledge/turn-retrieval.js';
import type { Mcp } from '../mcp/mcp.js';
import type { TurnTools } from '../mcp/pipeline/turn-tools.js';
import type { Skills } from '../skills/skills.js';
import type { TurnSkills } from '../skills/turn-skills.js';
import { EMPTY_COST, estimateInteractionCost, type PricingTable } from '../usage/cost.js';
import { countTurnUsage, type TokenUsageSummary } from '../usage/token-usage.js';
import type { Conversations, SessionRow, TurnRecord } from './conversations.js';
import { agentText, matchFixedResponse, normalizeMessageType } from './fixed-response.js';
import { presentMessage, type MessageRow } from './messages.js';
import { primaryModel, TurnModelRouter, type ModelOverride } from './model-router.js';
import type { RequestLimits } from './request-limits.js';
import type { SessionEvents } from './session-events.js';
import type { SessionTurns, TurnTicket } from './session-turns.js';
import { ToolCallBudget } from './tool-budget.js';
import type { TimedModelCall, TimedSpan, TurnTraceExporter } from '../observability/turn-trace-exporter.js';

/** `ChatRequest` (spec 4.2). `message_type` is free text: unknown values become `other`, never a 422. */
export const chatRequestSchema = z
  .object({
    thread_id: z.string().trim().min(1).max(200).optional(),
    agent_id: z.string().trim().min(1).max(64).nullable().optional(),
    message: z.string(),
    message_type: z.string().max(64).optional(),
    model_name: z.string().trim().min(1).max(200).optional(),
    model_provider: z.string().trim().min(1).max(80).optional(),
    model_temperature: z.number().min(0).max(2).optional(),
  })
  .strict();

export type ChatRequest = z.output<typeof chatRequestSchema>;

/** The turn a stream stored, which its `done` event names; none for a refusal or a message during a takeover. */
export interface StoredTurn {
  session_id: string;
  turn_id: string;
  usage: TokenUsageSummary;
}

/** SSE events of spec 6.1; `done` is always the last, and names the turn it stored. The host's `error` events carry a stable `code`. */
export type StreamEvent = { type: 'token'; content: string } | { type: 'error'; content: string; code: ErrorCode } | ({ type: 'done' } & Partial<StoredTurn>);

/** A session id a client cannot guess (128 random bits): the id of every session an anonymous client starts. */
export const issueSessionId = () => randomBytes(16).toString('base64url');

/**
 * Who starts a turn, and through which channel: quick match answers only `POST /stream` (spec 4.13); a WebSocket
 * customer message always goes to the orchestrator.
 */
export interface TurnCaller {
  principal: AdminPrincipal | undefined;
  callerKey: string | null;
  channel: 'http' | 'websocket';
  /** The request's `thread_id` was issued by the server for this request: a new session for its caller. */
  issuedSession?: boolean;
}

/**
 * A turn that cannot run, with its catalog code. Found by `admit`, it is an HTTP error before any stream opens;
 * found once streaming, it is an `error` event, then `done`.
 */
const refusal = (code: ErrorCode, message: string) => new AgentHostError(ERROR_CODES[code].status ?? 409, message, { code });

/** A request `admit` accepted: what `stream` runs, with what it already looked up. */
export interface AdmittedTurn {
  request: ChatRequest;
  caller: TurnCaller;
  agent: AgentView | null;
  override: ModelOverride | null;
  /** The caller may choose sessions (an administrator with conversations.write). */
  trusted: boolean;
  /** The turn's place in its session's line; none for a session this request starts. */
  ticket: TurnTicket | null;
}

/**
 * Administrators who may write conversations choose session ids and continue any session; everyone else
 * (anonymous clients, administrators without the permission) chats only in sessions the server issued to them.
 */
const mayChooseSessions = (principal: AdminPrincipal | undefined) => principal?.permissions.includes('conversations.write') ?? false;

const splitOnSpaces = (text: string) => text.split(/(?<= )/).filter((part) => part.length > 0);

const TAKEN_OVER = 'a human operator took over the session';

const NO_MODEL_USAGE: TokenUsageSummary = { input_tokens: 0, output_tokens: 0, total_tokens: 0, token_usage_source: 'no_model_invocation' };

export interface ChatServiceDeps {
  config: HostConfig;
  agents: Agents;
  conversations: Conversations;
  limits: RequestLimits;
  /** One turn at a time per session. */
  turns: SessionTurns;
  orchestrators: KeyedRegistry<Orchestrator>;
  providers: KeyedRegistry<ModelProvider>;
  /** Prices of the model catalog, for each model call's estimated cost. */
  pricing: PricingTable;
  /** Stored messages are published here for the session's WebSocket room. */
  events: SessionEvents;
  /** Retrieval over the agent's mounted sources. */
  knowledge: Pick<Knowledge, 'turnRetrieval'>;
  /** The agent's mounted skills. */
  skills: Pick<Skills, 'turnSkills'>;
  /** The agent's mounted MCP tools: the tool handle, the MCP pipeline and quick match. */
  mcp: Pick<Mcp, 'turnTools'>;
  /** Exports each turn's trace over OTLP when an endpoint is configured. */
  traces?: TurnTraceExporter;
  logger: Logger;
}

/**
 * One chat turn from request to `done` (spec 4.2): validation, session,
 * fixed responses, limits, model resolution, the orchestrator, usage and
 * one transaction persisting the turn. Every path ends with `done`.
 */
export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {}

  /**
   * Everything about a request that can be refused before a stream opens: the message, the agent and whether this
   * caller may use it, the model override. Throws the refusal as an `AgentHostError` with its catalog code.
   */
  async admit(request: ChatRequest, caller: TurnCaller): Promise<AdmittedTurn> {
    const { config } = this.deps;
    const message = request.message;
    const messageIssue = (msg: string, type: string, code: ErrorCode) => new ValidationError([{ loc: ['body', 'message'], msg, type }], { code });
    if (message.trim() === '') throw messageIssue('message is empty', 'empty', 'MESSAGE_EMPTY');
    if (message.length > config.agent.message_max_length) {
      throw messageIssue(`message is ${message.length} characters; the limit is ${config.agent.message_max_length}`, 'too_long', 'MESSAGE_TOO_LONG');
    }
    const trusted = mayChooseSessions(caller.principal);
    // Without an agent a turn runs the default model with the operator's key and no agent limits: not for the public.
    if (!request.agent_id && !trusted) throw refusal('AGENT_REQUIRED', 'agent_id is required: chat goes through a public agent');
    const agent = request.agent_id ? await this.loadAgent(request.agent_id, caller.principal) : null;
    const override = this.validatedOverride(request, agent, trusted);
    // One turn at a time per session: a message arriving while the session answers waits its turn, or is refused.
    const ticket = request.thread_id === undefined ? null : await this.deps.turns.enter(request.thread_id);
    if (ticket && agent?.multitask_strategy === 'reject' && !(await ticket.first())) {
      await ticket.leave();
      throw refusal('SESSION_BUSY', `session ${request.thread_id} is answering another message; send this one when the answer is done`);
    }
    return { request, caller, agent, override, trusted, ticket };
  }

  /** Runs an admitted turn: events as they come, `error` events for what goes wrong, and always `done` last. */
  async *stream(admitted: AdmittedTurn, signal: AbortSignal): AsyncGenerator<StreamEvent, void, void> {
    const done: { turn?: StoredTurn } = {};
    const { ticket } = admitted;
    // An administrator may cancel the running turn of a session (POST /sessions/{id}/cancel), from any instance.
    const cancel = new AbortController();
    const cancellation: { by?: string } = {};
    const stopWatching = ticket?.watchCancel(({ by }) => {
      cancellation.by = by;
      cancel.abort();
    });
    try {
      const waitSeconds = this.deps.config.agent.turn_queue_timeout_seconds;
      if (ticket && !(await ticket.waitForTurn(AbortSignal.any([signal, cancel.signal]), waitSeconds * 1000))) {
        if (!signal.aborted) {
          yield cancellation.by
            ? { type: 'error', content: `the message was cancelled by ${cancellation.by} before it was answered`, code: 'TURN_CANCELLED' }
            : { type: 'error', content: `the session was busy answering earlier messages for ${waitSeconds} s; send this one again`, code: 'SESSION_BUSY' };
        }
        return;
      }
      yield* this.turn(admitted, AbortSignal.any([signal, cancel.signal]), cancellation, done);
    } catch (error) {
      if (error instanceof AgentHostError) yield { type: 'error', content: error.message, code: error.code };
      else {
        this.deps.logger.error({ err: error }, 'chat turn failed');
        yield { type: 'error', content: 'the reply failed; please try again', code: 'INTERNAL_ERROR' };
      }
    } finally {
      stopWatching?.();
      await ticket?.leave();
      yield { type: 'done', ...done.turn };
    }
  }

  private async *turn(
    admitted: AdmittedTurn,
    signal: AbortSignal,
    cancellation: { by?: string },
    done: { turn?: StoredTurn },
  ): AsyncGenerator<StreamEvent, void, void> {
    const { config, conversations } = this.deps;
    const { request, caller, agent, override, trusted } = admitted;
    const started = Date.now();
    const message = request.message;
    const messageType = normalizeMessageType(request.message_type);
    const threadId = request.thread_id ?? issueSessionId();
    const mode = trusted ? 'choose' : caller.issuedSession || request.thread_id === undefined ? 'issue' : 'continue_issued';
    const opened = await conversations.openSession(threadId, agent?.agent_id ?? null, config.agent.history_message_limit, mode);
    if (!opened) {
      // The same words whether the session exists or not, so a refusal tells a guesser nothing.
      throw trusted
        ? refusal('SESSION_AGENT_MISMATCH', `session ${threadId} belongs to another agent; continue it through that agent`)
        : refusal('SESSION_NOT_FOUND', `no session ${threadId} of this agent was started by you; omit thread_id to start a new session`);
    }
    const { session, history } = opened;
    if (session.status === 'HUMAN_ACTIVE') {
      // A human operator answers: the message is stored and shown, the AI stays silent and no turn is created.
      this.publish(session.id, [await conversations.storeCustomerMessage(session.id, message, messageType)]);
      return;
    }
    const turnId = randomUUID();
    const traceId = randomBytes(16).toString('hex');
    const base = {
      turn_id: turnId,
      session_id: session.id,
      agent_id: agent?.agent_id ?? null,
      message_type: messageType,
      user_message: { id: randomUUID(), created_at: session.opened_at },
      user_text: message,
      caller_key: caller.callerKey,
      trace_id: traceId,
    };

    const fixed = agent?.agent_type === 'chat' ? matchFixedResponse(agent.message_type_response_config, messageType, message) : undefined;
    if (fixed !== undefined) {
      let firstToken: number | null = null;
      for (const content of splitOnSpaces(fixed)) {
        firstToken ??= Date.now() - started;
        yield { type: 'token', content };
      }
      const stored = await conversations.persistTurn({
        ...base,
        reply: fixed,
        orchestrator_key: null,
        response_source: 'fixed_response',
        status: 'completed',
        error_message: null,
        model: null,
        usage: NO_MODEL_USAGE,
        cost: EMPTY_COST,
        counts_toward_limits: false,
        first_token_ms: firstToken,
        latency_ms: Date.now() - started,
        context: this.context({
          routing: null,
          messageType,
          agent,
          usage: null,
          result: { reply: fixed, response_source: 'fixed_response', observation: {} },
          traceId,
        }),
        override: null,
      });
      this.publish(session.id, stored);
      this.exportTrace(base, started, 'completed', 'fixed_response', [], []);
      done.turn = { session_id: session.id, turn_id: turnId, usage: NO_MODEL_USAGE };
      return;
    }

    const agentLimit = agent && (await this.deps.limits.exceeded(agent.agent_id, agent));
    if (agentLimit) throw refusal('AGENT_LIMIT_REACHED', agentLimit);
    const quota = await this.deps.limits.callerExceeded(caller.callerKey);
    if (quota) throw refusal('QUOTA_REACHED', quota);
    const lease = agent?.max_concurrent_requests != null ? await this.deps.limits.acquire(agent.agent_id, agent.max_concurrent_requests) : null;
    if (lease === undefined) throw refusal('AGENT_BUSY', `this agent is already answering ${agent!.max_concurrent_requests} requests; try again shortly`);
    try {
      await admitted.ticket?.running(turnId);
      yield* this.runOrchestrator({
        request,
        agent,
        session,
        history,
        messageType,
        override,
        base,
        started,
        signal,
        cancellation,
        channel: caller.channel,
        trusted,
        done,
      });
    } finally {
      await lease?.release();
    }
  }

  private async *runOrchestrator(input: {
    request: ChatRequest;
    agent: AgentView | null;
    session: SessionRow;
    history: ChatMessage[];
    messageType: MessageType;
    override: ModelOverride | null;
    base: Pick<TurnRecord, 'turn_id' | 'session_id' | 'agent_id' | 'message_type' | 'user_message' | 'user_text' | 'caller_key' | 'trace_id'>;
    started: number;
    signal: AbortSignal;
    /** Set when an administrator cancelled the turn (then `signal` is aborted too). */
    cancellation: { by?: string };
    channel: TurnCaller['channel'];
    trusted: boolean;
    done: { turn?: StoredTurn };
  }): AsyncGenerator<StreamEvent, void, void> {
    const { config, conversations, orchestrators, providers } = this.deps;
    const { agent, history, messageType, base, started } = input;
    const orchestratorKey =
      agent?.agent_type === 'chat' ? (agent.orchestrator_key ?? config.agent.default_orchestrator_key) : config.agent.default_orchestrator_key;
    const orchestrator = orchestrators.get(orchestratorKey);
    if (!orchestrator) throw refusal('RUNTIME_UNAVAILABLE', `the chat runtime "${orchestratorKey}" is not available on this host`);
    // The turn runs: operators watching the session see the customer's message now, not once the reply is stored.
    this.publish(base.session_id, [
      {
        id: base.user_message.id,
        session_id: base.session_id,
        role: 'user',
        content: base.user_text,
        message_type: messageType,
        turn_id: base.turn_id,
        sender_id_snapshot: null,
        sender_name_snapshot: null,
        metadata: null,
        created_at: base.user_message.created_at,
      },
    ]);
    // Stopped by the client going away, or by an operator taking over before a model call.
    const takeover = new AbortController();
    const signal = AbortSignal.any([input.signal, takeover.signal]);
    // Only agents with human_takeover_enabled can be taken over (spec 3.1); other turns skip the round trip.
    const beforeModelCall = agent?.human_takeover_enabled
      ? async () => {
          if ((await conversations.status(base.session_id)) !== 'HUMAN_ACTIVE') return;
          takeover.abort();
          throw new Error(TAKEN_OVER);
        }
      : undefined;
    // A session keeps the override it was given, as if the request had repeated it.
    const sessionOverride: ModelOverride | null =
      input.override ??
      (input.session.model_provider || input.session.model_name
        ? {
            model_name: input.session.model_name ?? undefined,
            model_provider: input.session.model_provider ?? undefined,
            model_temperature: input.session.model_temperature ?? undefined,
          }
        : null);
    const snapshot = agent ? toSnapshot(agent, orchestratorKey) : null;
    const router = new TurnModelRouter(snapshot, sessionOverride, config, providers, { message: input.request.message, beforeModelCall });
    const spans: TimedSpan[] = [];
    const retrieval = this.deps.knowledge.turnRetrieval(agent && agent.agent_type === 'chat' ? agent : null);
    // One budget per turn: skill and MCP executions both count toward max_tool_calls_total_per_request (spec 8).
    const toolBudget = new ToolCallBudget(agent?.max_tool_calls_total_per_request ?? null);
    const skills = this.deps.skills.turnSkills({
      agentId: agent?.agent_type === 'chat' ? agent.agent_id : null,
      sessionId: base.session_id,
      turnId: base.turn_id,
      traceId: base.trace_id,
      budget: toolBudget,
      signal,
    });
    const trace: Trace = {
      traceId: base.trace_id,
      span: async (name, run) => {
        const attributes: Record<string, unknown> = {};
        const t0 = Date.now();
        try {
          return await run(attributes);
        } finally {
          spans.push({ name, start_ms: t0 - started, ms: Date.now() - t0, attributes });
        }
      },
    };
    const tools = this.deps.mcp.turnTools({
      agent: agent?.agent_type === 'chat' ? agent : null,
      sessionId: base.session_id,
      turnId: base.turn_id,
      traceId: base.trace_id,
      message: input.request.message,
      messageType,
      history,
      models: router,
      trace,
      budget: toolBudget,
      signal,
    });
    const context: TurnContext = {
      agent: snapshot ?? defaultSnapshot(orchestratorKey),
      session_id: base.session_id,
      turn_id: base.turn_id,
      message: agentText(messageType, input.request.message),
      message_type: messageType,
      history,
      recent_user_messages: tools.userHistory,
      models: router,
      retrieval: retrieval.handle,
      tools: tools.handle,
      skills: skills.handle,
      trace,
      log: this.deps.logger.child({ trace_id: base.trace_id, turn_id: base.turn_id }),
      signal,
    };

    let reply = '';
    let firstToken: number | null = null;
    let result: TurnResult | undefined;
    let failure: string | null = null;
    const iterator = input.channel === 'http' ? tools.quickMatchOr(() => orchestrator.run(context)) : orchestrator.run(context);
    try {
      for (;;) {
        const step = await iterator.next();
        if (step.done) {
          result = step.value;
          break;
        }
        if (step.value.type === 'token') {
          firstToken ??= Date.now() - started;
          reply += step.value.content;
        }
        // An orchestrator's own error events carry no code: they are the runtime's report of a failure within the turn.
        yield step.value.type === 'error' ? { ...step.value, code: 'RUNTIME_ERROR' } : step.value;
      }
    } catch (error) {
      const { by } = input.cancellation;
      const stopped = takeover.signal.aborted ? TAKEN_OVER : by ? `cancelled by ${by}` : input.signal.aborted ? 'client disconnected' : null;
      failure = stopped ?? (error as Error).message;
      if (by) yield { type: 'error', content: `the turn was cancelled by ${by}`, code: 'TURN_CANCELLED' };
      if (!stopped) {
        // Provider text can carry key fragments and internal addresses: administrators see it, the public a reference.
        const content = input.trusted
          ? `the model failed to answer: ${(error as Error).message}`
          : `the model failed to answer; please try again (reference ${base.trace_id})`;
        yield { type: 'error', content, code: 'MODEL_FAILED' };
      }
    } finally {
      const { summary: usage, calls } = countTurnUsage(router.calls);
      const finalModel = router.finalModel ?? null;
      // A turn that never finished was producing a model reply.
      const unfinished: TurnResult = { reply, response_source: 'llm_generated', observation: {} };
      // Stopped by a takeover: aborted; by its caller leaving or an administrator: cancelled, with the usage spent so far.
      const status = result ? 'completed' : takeover.signal.aborted ? 'aborted' : signal.aborted ? 'cancelled' : 'failed';
      const stored = await conversations.persistTurn({
        ...base,
        reply: result?.reply ?? (reply || null),
        orchestrator_key: orchestratorKey,
        response_source: (result ?? unfinished).response_source,
        status,
        error_message: failure,
        model: finalModel && { model_name: finalModel.model_name, model_provider: finalModel.model_provider, model_temperature: finalModel.model_temperature },
        usage,
        cost: estimateInteractionCost(calls, usage.token_usage_source, this.deps.pricing),
        counts_toward_limits: true,
        first_token_ms: firstToken,
        latency_ms: Date.now() - started,
        context: this.context({
          routing: router.routingRecord(),
          messageType,
          agent,
          usage,
          result: result ?? unfinished,
          spans,
          retrieval,
          skills,
          tools,
          traceId: base.trace_id,
        }),
        override: input.override,
      });
      this.publish(
        base.session_id,
        stored.filter((m) => m.id !== base.user_message.id),
      );
      const modelCalls = router.calls.map((call, i) => ({
        ...calls[i]!,
        start_ms: (call.started_at ?? started) - started,
        ms: (call.ended_at ?? Date.now()) - (call.started_at ?? started),
      }));
      this.exportTrace(base, started, status, (result ?? unfinished).response_source, spans, modelCalls);
      input.done.turn = { session_id: base.session_id, turn_id: base.turn_id, usage };
    }
  }

  private exportTrace(
    base: Pick<TurnRecord, 'trace_id' | 'turn_id' | 'session_id' | 'agent_id'>,
    started: number,
    status: string,
    responseSource: string,
    spans: TimedSpan[],
    modelCalls: TimedModelCall[],
  ): void {
    this.deps.traces?.export({
      traceId: base.trace_id,
      turnId: base.turn_id,
      sessionId: base.session_id,
      agentId: base.agent_id,
      startedAt: started,
      latencyMs: Date.now() - started,
      status,
      responseSource,
      spans,
      modelCalls,
    });
  }

  /** The turn's trace id, whether it was exported, and where a person opens it (`[observability]`). */
  private traceLink(traceId: string | undefined) {
    if (!traceId) return null;
    const template = this.deps.config.observability.trace_url_template;
    return { trace_id: traceId, exported: this.deps.traces !== undefined, url: template ? template.replaceAll('{trace_id}', traceId) : null };
  }

  private publish(sessionId: string, messages: MessageRow[]): void {
    this.deps.events.publish(...messages.map((m) => ({ type: 'message' as const, session_id: sessionId, message: presentMessage(m) })));
  }

  /** The turn context snapshot (spec 2.2). */
  private context(input: {
    routing: ReturnType<TurnModelRouter['routingRecord']> | null;
    messageType: MessageType;
    agent: AgentView | null;
    usage: TokenUsageSummary | null;
    result: TurnResult;
    spans?: TimedSpan[];
    traceId?: string;
    retrieval?: TurnRetrieval;
    skills?: TurnSkills;
    tools?: TurnTools;
  }) {
    const usage = input.usage ?? NO_MODEL_USAGE;
    return {
      observability_schema_version: 'v2',
      context_payload: {
        message_type: input.messageType,
        agent_id: input.agent?.agent_id ?? null,
        response_source: input.result.response_source,
        observation: { ...input.tools?.observation, ...input.result.observation },
        model_routing: input.routing,
        trace_spans: input.spans ?? [],
        trace: this.traceLink(input.traceId),
        retrieval: input.retrieval?.summary() ?? [],
      },
      rag_context: input.retrieval?.ragContext() ?? [],
      skill_context: input.skills?.skillContext() ?? [],
      mcp_context: input.tools?.context ?? [],
      turn: { response_source: input.result.response_source, generation_usage: usage },
      skill_calls: input.skills?.calls() ?? [],
      mcp_calls: input.tools?.calls ?? [],
    };
  }

  private async loadAgent(agentId: string, principal: AdminPrincipal | undefined): Promise<AgentView> {
    let agent: AgentView;
    try {
      agent = await this.deps.agents.get(agentId);
    } catch {
      throw refusal('AGENT_NOT_FOUND', `agent ${agentId} not found`);
    }
    if (agent.status !== 'active') throw refusal('AGENT_INACTIVE', `agent ${agentId} is not active`);
    if (agent.public_access_mode === 'public_anonymous') return agent;
    if (agent.public_access_mode === 'admin_only' && mayChooseSessions(principal)) return agent;
    if (agent.public_access_mode === 'admin_only')
      throw refusal('AGENT_NOT_PUBLIC', `agent ${agentId} is only available to administrators with conversations.write`);
    throw refusal('AGENT_NOT_PUBLIC', `agent ${agentId} is served through its public API, not /stream`);
  }

  /**
   * A request override is used only when its provider exists and the model it
   * names (the missing half taken from the agent's primary triple or the
   * global default) is in the model catalog; otherwise the request is refused. Anonymous callers override only
   * where the agent's `model_routing_config.allow_public_model_override` allows it.
   */
  private validatedOverride(request: ChatRequest, agent: AgentView | null, trusted: boolean): ModelOverride | null {
    if (request.model_name === undefined && request.model_provider === undefined && request.model_temperature === undefined) return null;
    const { config, providers } = this.deps;
    const routing = agent?.model_routing_config as { allow_public_model_override?: boolean } | null | undefined;
    if (!trusted && routing?.allow_public_model_override !== true) {
      throw refusal('MODEL_OVERRIDE_REFUSED', 'this agent does not take model_name, model_provider or model_temperature from public clients');
    }
    if (request.model_provider !== undefined && !providers.has(request.model_provider)) {
      throw refusal('UNKNOWN_MODEL', `unknown model_provider "${request.model_provider}"`);
    }
    if (request.model_name !== undefined || request.model_provider !== undefined) {
      const primary = primaryModel(
        agent && {
          model_name: agent.model_name as string | null,
          model_provider: agent.model_provider as string | null,
          model_temperature: agent.model_temperature as number | null,
        },
        config,
      );
      const model_name = request.model_name ?? primary.model_name;
      const model_provider = request.model_provider ?? primary.model_provider;
      if (!config.models.catalog.some((m) => m.model_name === model_name && m.model_provider === model_provider)) {
        throw refusal('UNKNOWN_MODEL', `unknown model "${model_name}" of model_provider "${model_provider}"; GET /models lists the models`);
      }
    }
    return { model_name: request.model_name, model_provider: request.model_provider, model_temperature: request.model_temperature };
  }
}

function toSnapshot(agent: AgentView, orchestratorKey: string): AgentSnapshot {
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
