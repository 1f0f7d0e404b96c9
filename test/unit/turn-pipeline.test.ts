// The chat turn pipeline (issue 14, item 7) with every store and neighbour faked: which stages each kind of turn
// passes, in order (the `turn.<stage>` spans of its stored context), that every turn is saved exactly once however it
// ends, and that a failure reaches the stream under the mapping of an HTTP error (no internal text; the log has it
// with the request id). The same paths run against real servers in test/integration (stream, quick match, takeover).
import { ChatService, DEFAULT_CONFIG_DIR, loadConfig, type StreamEvent } from '@agent-host/core';
import type { Orchestrator, TurnEvent, TurnResult } from '@agent-host/sdk';
import { KeyedRegistry } from '@agent-host/sdk/kernel';
import t from 'tap';
import { memoryLogger, type LogRecord } from '../../sdk/src/testing/fake-services.js';
import { TakeoverHints } from '../../core/src/chat/takeover-hints.js';

interface Options {
  agent?: Record<string, unknown>;
  orchestrator?: Orchestrator['run'];
  quickMatch?: TurnResult;
  openSession?: () => Promise<unknown>;
  limitReached?: string;
}

const CHAT_AGENT = { agent_id: 'agent-1', name: 'Desk', agent_type: 'chat', status: 'active', public_access_mode: 'public_anonymous' };

/** A ChatService whose neighbours record what the pipeline asked of them. */
function pipeline(options: Options = {}) {
  const saved: Record<string, unknown>[] = [];
  const published: { type: string; message: { role: string } }[] = [];
  const asked: string[] = [];
  const logs: LogRecord[] = [];
  const orchestrators = new KeyedRegistry<Orchestrator>('orchestrators');
  const run: Orchestrator['run'] =
    options.orchestrator ??
    async function* (): AsyncGenerator<TurnEvent, TurnResult, void> {
      yield { type: 'token', content: 'Hello ' };
      yield { type: 'token', content: 'there' };
      return { reply: 'Hello there', response_source: 'llm_generated', observation: {} };
    };
  orchestrators
    .forPlugin('test-runtime', { onRegister: () => undefined })
    .register('core_chat_v1', { displayName: 'Test runtime', description: 'Scripted', experimental: false, run });
  const openSession =
    options.openSession ??
    (async (id: string) => ({
      session: { id, opened_at: new Date().toISOString(), agent_id: 'agent-1', status: 'AI_ACTIVE' },
      history: [],
      ticketId: null,
    }));
  const chat = new ChatService({
    config: loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: {} }),
    agents: { runtime: async () => ({ ...CHAT_AGENT, ...options.agent }) },
    providers: new KeyedRegistry('model providers'),
    // The session the request starts joins its line in openSession's statement, which this fake does not model.
    turns: { lineFor: (turnId: string) => ({ turnId, instanceId: 'test-instance', seconds: 30 }), takeovers: new TakeoverHints() },
    // Every minute budget allows the turn; a session the request starts takes no ticket with them.
    trafficLimits: { takeTurn: async () => undefined, turnBuckets: () => ({ buckets: [], refusal: () => undefined }) },
    conversations: {
      openSession,
      // A turn to a session it continues takes no ticket here and leaves the session to stage 2 (`openSession`).
      admitToSession: async () => ({ buckets: [], ticketId: null, opened: undefined }),
      // A session the server issues opens at admission, with the (faked) budgets.
      issueSession: async (id: string) => ({ buckets: [], opened: await openSession(id) }),
      persistTurn: async (record: Record<string, unknown>) => {
        saved.push(record);
        return [];
      },
    },
    events: { publish: (...broadcasts: (typeof published)[number][]) => published.push(...broadcasts) },
    limits: {
      exceeded: async () => {
        asked.push('limits');
        return options.limitReached;
      },
      callerExceeded: async () => undefined,
    },
    orchestrators,
    pricing: new Map(),
    knowledge: { turnRetrieval: () => ({ handle: {}, summary: () => [], ragContext: () => [] }) },
    skills: { turnSkills: () => ({ handle: {}, skillContext: () => [], calls: () => [] }) },
    mcp: {
      turnTools: () => ({
        handle: {},
        userHistory: [],
        observation: {},
        context: [],
        calls: [],
        quickMatch: async () => {
          asked.push('quick match');
          return options.quickMatch ?? null;
        },
      }),
    },
    scheduledTasks: { allowAnonymous: false, defaultTimeZone: 'UTC' },
    logger: memoryLogger(logs),
  } as never);
  // A new session the server issues, or (`thread_id`) one the caller continues, opened once the stream runs.
  const send = async (message: string, extra: { message_type?: string; channel?: 'http' | 'websocket'; thread_id?: string } = {}) => {
    const admitted = await chat.admit(
      { agent_id: 'agent-1', message, message_type: extra.message_type, thread_id: extra.thread_id },
      {
        principal: undefined,
        callerKey: 'ip:203.0.113.9',
        channel: extra.channel ?? 'http',
        issuedSession: extra.thread_id === undefined,
        requestId: 'req-7',
      },
    );
    const events: StreamEvent[] = [];
    for await (const event of chat.stream(admitted, new AbortController().signal)) events.push(event);
    return events;
  };
  return { send, saved, published, asked, logs };
}

const stagesOf = (record: Record<string, unknown> | undefined) =>
  ((record?.context as { context_payload: { trace_spans: { name: string }[] } }).context_payload.trace_spans ?? [])
    .map((s) => s.name)
    .filter((name) => name.startsWith('turn.'));
const reply = (events: StreamEvent[]) =>
  events
    .filter((e) => e.type === 'token')
    .map((e) => (e as { content: string }).content)
    .join('');

t.test('a turn the runtime answers passes every stage in order and is saved once', async (t) => {
  const { send, saved, published, asked } = pipeline();
  const events = await send('Where is my parcel?');
  t.equal(reply(events), 'Hello there');
  t.match(events.at(-1), { type: 'done', turn_id: String, session_id: String }, 'done names the stored turn');
  t.equal(saved.length, 1, 'saved once');
  t.same(stagesOf(saved[0]), ['turn.session', 'turn.fixed-response', 'turn.limits', 'turn.context', 'turn.quick-match', 'turn.orchestrator']);
  t.match(saved[0], { status: 'completed', response_source: 'llm_generated', orchestrator_key: 'core_chat_v1', counts_toward_limits: true });
  t.same(asked, ['limits', 'quick match']);
  t.same(
    published.map((b) => b.message.role),
    ['user'],
    "the customer's message is shown when the turn starts (the stored reply follows from the store)",
  );
});

t.test('a fixed response answers before the limits, without runtime or tools, and is not counted', async (t) => {
  const { send, saved, asked } = pipeline({
    agent: { message_type_response_config: { form: { enabled: true, response_text: 'Thanks, we got your form.' } } },
    limitReached: 'the agent reached max_total_requests (10)',
    orchestrator: () => {
      throw new Error('the runtime must not run');
    },
  });
  const events = await send('name=Ada', { message_type: 'form' });
  t.equal(reply(events), 'Thanks, we got your form.', 'a reached limit never blocks a fixed response (spec 4.2 rule 6)');
  t.equal(saved.length, 1);
  t.same(stagesOf(saved[0]), ['turn.session', 'turn.fixed-response']);
  t.match(saved[0], { response_source: 'fixed_response', orchestrator_key: null, counts_toward_limits: false, override: null, model: null });
  t.same(asked, [], 'neither limits nor tools were asked');
});

t.test('quick match answers in place of the runtime over HTTP only, with the same result type', async (t) => {
  const quick: TurnResult = { reply: 'Parcel JD0142 is in transit', response_source: 'mcp_quick_match', observation: { mcp_quick_match_prefix: '/track' } };
  const http = pipeline({
    quickMatch: quick,
    orchestrator: () => {
      throw new Error('the runtime must not run');
    },
  });
  t.equal(reply(await http.send('/track JD0142')), 'Parcel JD0142 is in transit');
  t.same(stagesOf(http.saved[0]), ['turn.session', 'turn.fixed-response', 'turn.limits', 'turn.context', 'turn.quick-match']);
  t.match(http.saved[0], { response_source: 'mcp_quick_match', counts_toward_limits: true });

  const ws = pipeline({ quickMatch: quick });
  t.equal(reply(await ws.send('/track JD0142', { channel: 'websocket' })), 'Hello there', 'a WebSocket message goes to the runtime');
  t.same(ws.asked, ['limits'], 'quick match is not consulted over WebSocket');
});

t.test('a runtime that fails is saved once as failed; the public gets a reference, not the provider text', async (t) => {
  const { send, saved } = pipeline({
    // eslint-disable-next-line require-yield
    orchestrator: async function* () {
      throw new Error('401 from https://10.0.0.5/v1: key sk-live-123 revoked');
    },
  });
  const events = await send('Hello');
  const error = events.find((e) => e.type === 'error') as { content: string; code: string };
  t.equal(error.code, 'MODEL_FAILED');
  t.notMatch(error.content, /sk-live|10\.0\.0\.5/, 'no provider text');
  t.match(error.content, /reference [0-9a-f]{32}/, "a reference to the turn's trace");
  t.equal(saved.length, 1, 'saved once');
  t.match(saved[0], { status: 'failed', error_message: /sk-live-123/ });
  t.equal(events.at(-1)?.type, 'done');
});

t.test('failures before the runtime reach the stream with the error mapping of HTTP routes', async (t) => {
  const refused = pipeline({ limitReached: 'the agent reached max_total_requests (10)' });
  const limited = await refused.send('Hello');
  t.match(limited[0], { type: 'error', code: 'AGENT_LIMIT_REACHED', content: 'the agent reached max_total_requests (10)' }, 'a refusal says what it is');
  t.equal(refused.saved.length, 0, 'a refused turn stores nothing');

  const broken = pipeline({
    openSession: async () => {
      throw new Error('relation "chat_sessions" does not exist (host db-7.internal)');
    },
  });
  const events = await broken.send('Hello', { thread_id: 'a-session' });
  t.same(events[0], { type: 'error', code: 'INTERNAL_ERROR', content: 'internal server error' }, 'an unexpected error says only that it happened');
  t.same(events.at(-1), { type: 'done' }, 'then done, naming no turn');
  const logged = broken.logs.find((l) => l.level === 'error');
  t.match(logged, { msg: 'chat turn failed', fields: { req_id: 'req-7', code: 'INTERNAL_ERROR' } }, 'the log keeps it with the request id');
  t.match(String((logged?.fields.err as Error).message), /db-7\.internal/);

  const away = pipeline({
    openSession: async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    },
  });
  t.match(
    (await away.send('Hello', { thread_id: 'a-session' }))[0],
    { type: 'error', code: 'DATABASE_UNAVAILABLE' },
    'a database that is away is a retryable refusal, as over HTTP',
  );
});

t.test('a turn of an agent that cannot be taken over combines no abort signals', async (t) => {
  const { send } = pipeline();
  const any = AbortSignal.any;
  let combined = 0;
  AbortSignal.any = (signals) => {
    combined++;
    return any.call(AbortSignal, signals);
  };
  t.teardown(() => {
    AbortSignal.any = any;
  });
  t.equal(reply(await send('Where is my parcel?')), 'Hello there');
  t.equal(combined, 0, 'one controller stops the turn: AbortSignal.any costs some 20 µs of CPU a call on Node 20');
});
