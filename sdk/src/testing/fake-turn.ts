import { randomUUID } from 'node:crypto';
import { groundingPolicySchema, type GroundedAnswer } from '../extensions/grounding.js';
import type { ChatCallOptions, ChatMessage, ChatModel, ChatStreamChunk, ToolCallRequest } from '../extensions/models.js';
import type { AgentSnapshot, GroundingHandle, ModelStage, TurnContext, TurnToolHandle } from '../extensions/orchestrators.js';
import type { ScheduledTaskSummary, ScheduleRequest, SchedulingHandle, SchedulingOutcome } from '../extensions/scheduling.js';
import type { ToolCallOutcome, ToolHandle } from '../extensions/tools.js';
import { createGroundingHandle, type GroundingHandleOptions } from '../grounding/handle.js';
import type { Logger } from '../services/logger.js';

/** One answer of a {@link scriptedModel}: tokens to stream, or tool calls to request, or an error to fail with. @public */
export type ScriptedAnswer = { tokens: string[] } | { toolCalls: ToolCallRequest[] } | { error: Error };

/** What a {@link scriptedModel} was asked, call by call. @public */
export interface ModelCall {
  messages: ChatMessage[];
  options: ChatCallOptions | undefined;
}

/**
 * A chat model that answers from a script, one answer per call, streaming token by token; `beforeToken` runs before
 * each streamed token after the first (await in it to hold the stream). Past the end of the script it answers `ok`.
 * @public
 */
export function scriptedModel(script: ScriptedAnswer[], hooks: { beforeToken?: (index: number) => Promise<void> } = {}): ChatModel & { calls: ModelCall[] } {
  const calls: ModelCall[] = [];
  const next = (): ScriptedAnswer => script[calls.length - 1] ?? { tokens: ['ok'] };
  return {
    provider: 'scripted',
    modelName: 'scripted-1',
    calls,
    async *stream(messages, options): AsyncGenerator<ChatStreamChunk> {
      calls.push({ messages, options });
      const answer = next();
      if ('error' in answer) throw answer.error;
      if ('toolCalls' in answer) {
        for (const call of answer.toolCalls) yield { type: 'tool_call', call };
        return;
      }
      for (const [i, content] of answer.tokens.entries()) {
        options?.signal?.throwIfAborted();
        if (i > 0) await hooks.beforeToken?.(i);
        yield { type: 'token', content };
      }
      yield { type: 'usage', usage: { input_tokens: 10, output_tokens: answer.tokens.length } };
    },
    async invoke(messages, options) {
      calls.push({ messages, options });
      options?.signal?.throwIfAborted();
      const answer = next();
      if ('error' in answer) throw answer.error;
      if ('toolCalls' in answer) return { content: '', tool_calls: answer.toolCalls };
      return { content: answer.tokens.join(''), tool_calls: [], usage: { input_tokens: 10, output_tokens: answer.tokens.length } };
    },
  };
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

const noTools: ToolHandle = {
  list: async () => [],
  call: async (name): Promise<ToolCallOutcome> => ({ status: 'error', result: null, error: `no tool ${name} in this turn` }),
};

/** A {@link fakeScheduling} handle: what it was asked to make, in order, and the tasks it holds. @beta */
export interface FakeScheduling extends SchedulingHandle {
  readonly requests: { schedule: ScheduleRequest; message: string; conflict_policy?: 'skip' | 'defer' }[];
  readonly tasks: ScheduledTaskSummary[];
}

/**
 * A scheduling handle that keeps tasks in memory. With `refuse`, every `create` is refused with that reason. It
 * checks nothing else and evaluates no cron expression (`next_run_at` is `run_at`, `start_at` or one interval from
 * now, and null for `cron`): core does the real validation.
 * @beta
 */
export function fakeScheduling(options: { refuse?: string; time_zone?: string } = {}): FakeScheduling {
  const requests: FakeScheduling['requests'] = [];
  const tasks: ScheduledTaskSummary[] = [];
  const nextRun = (schedule: ScheduleRequest): string | null => {
    if (schedule.kind === 'once') return new Date(schedule.run_at).toISOString();
    if (schedule.kind === 'interval') return schedule.start_at ?? new Date(Date.now() + (schedule.every_seconds ?? 60) * 1000).toISOString();
    return null;
  };
  return {
    available: options.refuse === undefined,
    unavailable_reason: options.refuse ?? null,
    time_zone: options.time_zone ?? 'UTC',
    requests,
    tasks,
    async create(request): Promise<SchedulingOutcome> {
      requests.push(request);
      if (options.refuse !== undefined) return { status: 'refused', reason: options.refuse };
      const task: ScheduledTaskSummary = {
        task_id: randomUUID(),
        schedule: { ...request.schedule },
        message: request.message,
        next_run_at: nextRun(request.schedule),
        status: 'active',
      };
      tasks.push(task);
      return { status: 'done', task };
    },
    list: async () => tasks.filter((task) => task.status === 'active'),
    async cancel(taskId): Promise<SchedulingOutcome> {
      const task = tasks.find((t) => t.task_id === taskId && t.status === 'active');
      if (!task) return { status: 'refused', reason: `no active task ${taskId} in this session` };
      task.status = 'cancelled';
      task.next_run_at = null;
      return { status: 'done', task };
    },
  };
}

/** A {@link fakeGrounding} handle: the answers it produced, in order. @beta */
export interface FakeGrounding extends GroundingHandle {
  readonly answers: GroundedAnswer[];
}

/**
 * The SDK's grounding handle for a turn, with the policy given as an agent's `response_grounding_config` would be
 * (validated the same way; defaults filled in). It runs the same logic core runs and keeps each answer.
 * @beta
 */
export function fakeGrounding(config: Record<string, unknown> | null, options: Omit<GroundingHandleOptions, 'policy' | 'onAnswer'> = {}): FakeGrounding {
  const answers: GroundedAnswer[] = [];
  const handle = createGroundingHandle({ ...options, policy: config && groundingPolicySchema.parse(config), onAnswer: (answer) => answers.push(answer) });
  return Object.assign(handle, { answers });
}

/** A chat agent's configuration with no routing, tool or grounding settings; override any field. @public */
export function fakeAgentSnapshot(overrides: Partial<AgentSnapshot> = {}): AgentSnapshot {
  return {
    agent_id: randomUUID(),
    name: 'Conformance agent',
    agent_type: 'chat',
    orchestrator_key: 'under_test',
    system_prompt: 'You answer questions about parcels.',
    model_name: 'scripted-1',
    model_provider: 'scripted',
    model_temperature: null,
    hide_rag_source_filename: false,
    model_routing_config: null,
    mcp_response_config: null,
    mcp_runtime_config: null,
    response_grounding_config: null,
    ...overrides,
  };
}

/**
 * A {@link TurnContext} for one turn of a chat agent with no knowledge, tools or skills, every model stage answered
 * by `model`. Override any field: `fakeTurnContext(model, { message: 'Where is my parcel?' })`.
 * @public
 */
export function fakeTurnContext(model: ChatModel, overrides: Partial<TurnContext> = {}): TurnContext {
  const agent = fakeAgentSnapshot({ model_name: model.modelName, model_provider: model.provider });
  const tools: TurnToolHandle = { ...noTools, runPipeline: async () => ({ action: 'continue', tool_results: [], guidance: null, observation: {} }) };
  return {
    agent,
    session_id: randomUUID(),
    turn_id: randomUUID(),
    message: 'When do parcels ship?',
    message_type: 'user_chat',
    history: [],
    recent_user_messages: [],
    models: {
      choose: (stage: ModelStage) => ({
        model_name: model.modelName,
        model_provider: model.provider,
        model_temperature: null,
        role: stage === 'final' ? 'agent_primary' : `${stage}_model`,
      }),
      chatModel: () => model,
    },
    retrieval: { search: async () => [] },
    tools,
    skills: noTools,
    scheduling: fakeScheduling(),
    grounding: fakeGrounding(null),
    trace: { traceId: randomUUID(), span: (_name, run) => run({}) },
    log: silent,
    signal: new AbortController().signal,
    ...overrides,
  };
}
