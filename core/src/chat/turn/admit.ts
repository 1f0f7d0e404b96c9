import { randomUUID } from 'node:crypto';
import { TooManyRequestsError, ValidationError, type ErrorCode, type ModelProvider } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { Agents, AgentView } from '../../agents/agents.js';
import type { HostConfig } from '../../config/schema.js';
import type { ConversationStore, OpenedSession } from '../conversation-store.js';
import { normalizeMessageType } from '../fixed-response.js';
import { primaryModel, type ModelOverride } from '../model-router.js';
import type { SessionTurns } from '../session-turns.js';
import type { BucketTake, TakenBucket } from '../traffic-limit-store.js';
import type { TrafficLimits, TurnBudgets } from '../traffic-limits.js';
import {
  issueSessionId,
  mayChooseSessions,
  quotaCaller,
  refusal,
  trustedCaller,
  type AdmittedTurn,
  type ChatRequest,
  type TurnCaller,
} from './turn-request.js';

export interface AdmitDeps {
  config: HostConfig;
  agents: Agents;
  providers: KeyedRegistry<ModelProvider>;
  turns: SessionTurns;
  trafficLimits: TrafficLimits;
  conversations: ConversationStore;
}

/**
 * Stage 1, resolve the agent: everything about a request that can be refused before a stream opens (the message, the
 * agent and whether this caller may use it, the model override, the minute budgets of `[rate_limits]`), and the turn's
 * place in its session's line, the session the server issues for it, or, for a customer's session under human takeover,
 * the message stored. Throws the refusal as an `AgentHostError` with its catalog code.
 */
export async function admitTurn(deps: AdmitDeps, request: ChatRequest, caller: TurnCaller): Promise<AdmittedTurn> {
  const { config } = deps;
  const message = request.message;
  const messageIssue = (msg: string, type: string, code: ErrorCode) => new ValidationError([{ loc: ['body', 'message'], msg, type }], { code });
  if (message.trim() === '') throw messageIssue('message is empty', 'empty', 'MESSAGE_EMPTY');
  if (message.length > config.agent.message_max_length) {
    throw messageIssue(`message is ${message.length} characters; the limit is ${config.agent.message_max_length}`, 'too_long', 'MESSAGE_TOO_LONG');
  }
  const trusted = trustedCaller(caller);
  // Without an agent a turn runs the default model with the operator's key and no agent limits: not for the public.
  if (!request.agent_id && !trusted) throw refusal('AGENT_REQUIRED', 'agent_id is required: chat goes through a public agent');
  const agent = request.agent_id ? await loadAgent(deps.agents, request.agent_id, caller) : null;
  const override = validatedOverride(deps, request, agent, trusted);
  const turnId = randomUUID();
  // One turn at a time per session: a message arriving while the session answers waits its turn, or is refused. It
  // takes its place in the session's line in the statement taking its rate limits, which also opens the session when
  // it is first; a session this request starts joins its line as it is created: nobody else can be in it.
  const sessionId = request.thread_id === undefined || caller.issuedSession ? null : request.thread_id;
  // A scheduled run is the host's own turn: it draws from no minute budget of a client.
  const budgets: TurnBudgets =
    caller.channel === 'scheduled'
      ? { callerKey: null, sessionId: null, anonymous: false }
      : { callerKey: caller.callerKey, sessionId, anonymous: !caller.principal };
  // A session the server issues for this request starts in the statement that takes its budgets (stage 2 finds it open).
  if (!trusted && sessionId === null) {
    const opened = await issueSession(deps, request, caller, agent, turnId, budgets);
    return { request, caller, agent, override, trusted, ticket: null, turnId, opened };
  }
  let ticketId: string | null = null;
  let opened: OpenedSession | undefined;
  if (!trusted && sessionId !== null && deps.turns.takeovers.underTakeover(sessionId)) {
    // A customer's message to its session, last seen under human takeover: stored at once if it still is (stage 2
    // shows it, and no turn follows), else in line with its ticket. A session this caller may not continue is refused
    // in stage 2.
    const admitted = await continueIssued(deps, request, agent!, sessionId, turnId, budgets);
    if (admitted?.storedMessage) return { request, caller, agent, override, trusted, ticket: null, turnId, opened: admitted };
    ticketId = admitted?.ticketId ?? null;
  } else if (sessionId !== null) {
    ({ ticketId, opened } = await withBudgets(deps, budgets, (buckets) =>
      deps.conversations.admitToSession(
        sessionId,
        agent?.agent_id ?? null,
        config.agent.history_message_limit,
        trusted ? 'choose' : 'continue_issued',
        { quotaCaller: quotaCaller(config, caller), line: deps.turns.lineFor(turnId) },
        buckets,
      ),
    ));
  } else {
    const refused = await deps.trafficLimits.takeTurn(budgets);
    if (refused) throw new TooManyRequestsError(refused.detail, refused.retryAfterSeconds);
  }
  // A ticket that came with its session opened is first in line.
  const ticket = sessionId !== null && ticketId !== null ? deps.turns.taken(sessionId, ticketId, opened !== undefined) : null;
  if (ticket && agent?.multitask_strategy === 'reject' && !(await ticket.first())) {
    await ticket.leave();
    throw refusal('SESSION_BUSY', `session ${request.thread_id} is answering another message; send this one when the answer is done`);
  }
  return { request, caller, agent, override, trusted, ticket, turnId, opened };
}

/**
 * A customer's message to the session the server issued to it, in the statement that takes the turn's minute budgets
 * and only when they allow it: stored at once under human takeover while nobody is in the session's line (no turn
 * follows, so it needs no ticket), else in line with its ticket.
 */
function continueIssued(deps: AdmitDeps, request: ChatRequest, agent: AgentView, sessionId: string, turnId: string, budgets: TurnBudgets) {
  const customerMessage = { content: request.message, messageType: normalizeMessageType(request.message_type) };
  return withBudgets(deps, budgets, (buckets) =>
    deps.conversations.continueIssued(sessionId, agent.agent_id, { line: deps.turns.lineFor(turnId), customerMessage }, buckets),
  ).then(({ opened }) => opened);
}

/** What `take` took with the turn's minute `budgets`, in one statement; their refusal, if any, is thrown. */
async function withBudgets<T extends { buckets: (TakenBucket | null)[] }>(
  deps: AdmitDeps,
  budgets: TurnBudgets,
  take: (buckets: BucketTake[]) => Promise<T>,
): Promise<T> {
  const { buckets, refusal: refusalOf } = deps.trafficLimits.turnBuckets(budgets);
  const taken = await take(buckets);
  const refused = refusalOf(taken.buckets);
  if (refused) throw new TooManyRequestsError(refused.refusal.detail, refused.refusal.retryAfterSeconds);
  return taken;
}

/**
 * Opens the new session of a caller who may not choose one, under the id the server issued for this request (or
 * issues now), in the statement that takes the turn's minute budgets, and only when they allow the turn. Nobody else
 * knows the session: its line is joined as it starts, and no takeover can hold it yet.
 */
function issueSession(deps: AdmitDeps, request: ChatRequest, caller: TurnCaller, agent: AgentView | null, turnId: string, budgets: TurnBudgets) {
  const { config } = deps;
  return withBudgets(deps, budgets, (buckets) =>
    deps.conversations.issueSession(
      request.thread_id ?? issueSessionId(),
      agent?.agent_id ?? null,
      config.agent.history_message_limit,
      { quotaCaller: quotaCaller(config, caller), line: caller.issuedSession ? deps.turns.lineFor(turnId) : null },
      buckets,
    ),
  ).then(({ opened }) => opened);
}

async function loadAgent(agents: Agents, agentId: string, { principal, channel }: TurnCaller): Promise<AgentView> {
  let agent: AgentView;
  try {
    agent = await agents.runtime(agentId);
  } catch {
    throw refusal('AGENT_NOT_FOUND', `agent ${agentId} not found`);
  }
  if (agent.status !== 'active') throw refusal('AGENT_INACTIVE', `agent ${agentId} is not active`);
  if (agent.public_access_mode === 'public_anonymous' || channel === 'scheduled') return agent;
  if (agent.public_access_mode === 'admin_only' && mayChooseSessions(principal)) return agent;
  if (agent.public_access_mode === 'admin_only')
    throw refusal('AGENT_NOT_PUBLIC', `agent ${agentId} is only available to administrators with conversations.write`);
  throw refusal('AGENT_NOT_PUBLIC', `agent ${agentId} is served through its public API, not /stream`);
}

/**
 * A request override is used only when its provider exists and the model it names (the missing half taken from the
 * agent's primary triple or the global default) is in the model catalog; otherwise the request is refused. Anonymous
 * callers override only where the agent's `model_routing_config.allow_public_model_override` allows it.
 */
function validatedOverride(deps: AdmitDeps, request: ChatRequest, agent: AgentView | null, trusted: boolean): ModelOverride | null {
  if (request.model_name === undefined && request.model_provider === undefined && request.model_temperature === undefined) return null;
  const { config, providers } = deps;
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
