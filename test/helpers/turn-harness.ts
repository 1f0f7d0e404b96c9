// A TurnContext for testing a chat runtime directly: real model providers of models-langchain from its package entry
// (offline, or openai against the OpenAI-compatible fixture server) or scripted ones, a retrieval handle with fixed
// chunks, real in-test tools, and a trace that records spans. Used by the tests of orchestrator-core-chat and
// orchestrator-react-agent.
import { fakeAgentSnapshot, fakeGrounding, fakeScheduling } from '@agent-host/sdk/testing';
import type {
  SchedulingHandle,
  AgentSnapshot,
  ChatMessage,
  ChatModel,
  ChatModelSpec,
  JsonSchema,
  Logger,
  ModelProvider,
  ModelStage,
  RetrievedChunk,
  ToolCallOutcome,
  ToolPipelineResult,
  TurnContext,
  TurnEvent,
  TurnToolHandle,
} from '@agent-host/sdk';
import { startOpenAiFixture, type OpenAiFixture, type OpenAiFixtureOptions } from '../fixtures/openai-server.js';
import modelsOpenAi from '@agent-host/plugin-models-openai';
import { providersFromPlugin } from './model-provider.js';

/** What the fixture helper needs of a tap test. */
export interface Test {
  teardown(fn: () => Promise<void> | void): void;
}

export interface InTestTool {
  description: string;
  input_schema: JsonSchema;
  run(args: Record<string, unknown>): unknown;
}

export interface ModelCall {
  stage: ModelStage;
  messages: ChatMessage[];
  toolNames: string[] | undefined;
}

export interface TurnHarness {
  context: TurnContext;
  /** Span names in the order they started, with the attributes the run set. */
  spans: { name: string; attributes: Record<string, unknown> }[];
  /** Every chat-model call (stage, a copy of its messages, offered tool names). */
  modelCalls: ModelCall[];
  /** Queries the retrieval handle received. */
  searches: string[];
  /** Calls the tool handle received. */
  toolCalls: { name: string; args: Record<string, unknown> }[];
  /** Calls the skill handle received. */
  skillCalls: { name: string; args: Record<string, unknown> }[];
}

const noop = () => {};
export const quietLog: Logger = { debug: noop, info: noop, warn: noop, error: noop, child: () => quietLog };

export function agentSnapshot(overrides: Partial<AgentSnapshot> = {}): AgentSnapshot {
  return fakeAgentSnapshot({
    agent_id: 'agent-1',
    name: 'Help desk',
    orchestrator_key: 'core_chat_v1',
    system_prompt: null,
    model_name: 'gpt-4o-mini',
    model_provider: 'openai',
    ...overrides,
  });
}

export function chunk(content: string, document_filename: string | null, score = 0.9): RetrievedChunk {
  return {
    content,
    score,
    source_id: 'source-1',
    source_name: 'Handbook',
    document_id: document_filename && `doc-${document_filename}`,
    document_filename,
    metadata: {},
  };
}

export function buildTurnContext(options: {
  provider: ModelProvider;
  message: string;
  agent?: Partial<AgentSnapshot>;
  history?: ChatMessage[];
  recentUserMessages?: string[];
  chunks?: RetrievedChunk[];
  tools?: Record<string, InTestTool>;
  skills?: Record<string, InTestTool>;
  modelSpec?: Partial<ChatModelSpec>;
  /** The turn's scheduling handle; by default one that is not available, as in a public chat. */
  scheduling?: SchedulingHandle;
  /** The agent's `response_grounding_config`; none by default. */
  grounding?: Record<string, unknown>;
  /** What core's MCP tool pipeline decides; by default it finds no tool to call. */
  pipeline?: ToolPipelineResult;
}): TurnHarness {
  const agent = agentSnapshot(options.agent);
  const spans: TurnHarness['spans'] = [];
  const modelCalls: ModelCall[] = [];
  const searches: string[] = [];
  const toolCalls: TurnHarness['toolCalls'] = [];
  const skillCalls: TurnHarness['skillCalls'] = [];
  const tools = options.tools ?? {};

  const recording = (inner: ChatModel, stage: ModelStage): ChatModel => ({
    provider: inner.provider,
    modelName: inner.modelName,
    stream(messages, callOptions) {
      modelCalls.push({ stage, messages: structuredClone(messages), toolNames: callOptions?.tools?.map((x) => x.name) });
      return inner.stream(messages, callOptions);
    },
    invoke(messages, callOptions) {
      modelCalls.push({ stage, messages: structuredClone(messages), toolNames: callOptions?.tools?.map((x) => x.name) });
      return inner.invoke(messages, callOptions);
    },
  });

  const toolHandle: TurnToolHandle = {
    // Core's MCP pipeline has its own tests (test/integration/mcp-pipeline.test.ts); here it finds no tool to call.
    runPipeline: async () => options.pipeline ?? { action: 'continue', tool_results: [], guidance: null, observation: {} },
    list: async () => Object.entries(tools).map(([name, tool]) => ({ name, description: tool.description, input_schema: tool.input_schema })),
    async call(name, args): Promise<ToolCallOutcome> {
      toolCalls.push({ name, args });
      const tool = tools[name];
      if (!tool) return { status: 'error', result: null, error: `tool ${name} is not allowed` };
      try {
        return { status: 'success', result: await tool.run(args) };
      } catch (error) {
        return { status: 'error', result: null, error: (error as Error).message };
      }
    },
  };

  const context: TurnContext = {
    agent,
    session_id: 'session-1',
    turn_id: 'turn-1',
    message: options.message,
    message_type: 'user_chat',
    history: options.history ?? [],
    recent_user_messages: options.recentUserMessages ?? [],
    models: {
      choose: (stage) => ({
        model_name: agent.model_name ?? 'default',
        model_provider: options.provider.offline ? 'offline' : 'openai',
        model_temperature: null,
        role: `${stage}_model`,
      }),
      chatModel: (stage) =>
        recording(
          options.provider.createChatModel({
            model_name: agent.model_name ?? 'default',
            temperature: null,
            timeoutMs: 5_000,
            options: {},
            ...options.modelSpec,
          }),
          stage,
        ),
    },
    retrieval: {
      async search(query) {
        searches.push(query);
        return options.chunks ?? [];
      },
    },
    tools: toolHandle,
    skills: {
      list: async () => Object.entries(options.skills ?? {}).map(([name, t]) => ({ name, description: t.description, input_schema: t.input_schema })),
      async call(name, args) {
        const skill = options.skills?.[name];
        if (!skill) return { status: 'error', result: null, error: `no skill ${name}` };
        skillCalls.push({ name, args });
        return { status: 'success', result: await skill.run(args) };
      },
    },
    scheduling: options.scheduling ?? fakeScheduling({ refuse: 'scheduling is not offered in this test' }),
    grounding: fakeGrounding(options.grounding ?? null, { hideSourceFilename: agent.hide_rag_source_filename }),
    trace: {
      traceId: 'trace-1',
      async span(name, run) {
        const attributes: Record<string, unknown> = {};
        spans.push({ name, attributes });
        return run(attributes);
      },
    },
    log: quietLog,
    signal: new AbortController().signal,
  };
  return { context, spans, modelCalls, searches, toolCalls, skillCalls };
}

export const tokenText = (events: TurnEvent[]) => events.filter((e) => e.type === 'token').map((e) => e.content);

export async function fixture(tt: Test, respond: OpenAiFixtureOptions['respond']): Promise<OpenAiFixture> {
  const server = await startOpenAiFixture({ respond });
  tt.teardown(() => server.close());
  return server;
}

/** The `offline` provider of models-langchain, from its package entry. */
export const offline = (await providersFromPlugin({})).get('offline')!;

/** The `openai` provider of models-openai (the one a host uses), from its package entry, calling the fixture `server`. */
export async function openaiAt(server: OpenAiFixture): Promise<ModelProvider> {
  process.env.AGENT_HOST_TEST_FIXTURE_KEY = 'sk-fixture';
  return (await providersFromPlugin({ base_url: server.url, api_key_env: 'AGENT_HOST_TEST_FIXTURE_KEY' }, { plugin: modelsOpenAi })).get('openai')!;
}

export const REFUNDS = 'Refunds are issued within 30 days of purchase.';
export const SHIPPING = 'Shipping takes five business days.';
export const CHUNKS = [chunk(REFUNDS, 'refund-policy.pdf'), chunk(SHIPPING, 'shipping-guide.md')];
