import { chatRequestSchema, issueSessionId, type Domains } from '@agent-host/core';
import { AgentHostError, safeValidate, ValidationError, type ErrorCode, type Logger } from '@agent-host/sdk';
import type { Server, Socket } from 'socket.io';
import { z } from 'zod';
import { errorCode } from './contract.js';

/** The demo gateway's socket.io namespace (spec 6.4): on only with `[demo_gateway] enabled = true`. */
export const DEMO_NAMESPACE = '/demo';

/** What the front end sends: one message of the conversation this socket holds. */
export const demoUserMessage = z.object({
  content: z.string().describe('The message'),
  time_zone: z.string().optional().describe("The visitor's IANA time zone, kept on the session"),
});

/** What the gateway sends for each message: tokens as they come, `error` for a refusal or failure, `done` last. */
export const demoAiResponse = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('token'), content: z.string().describe('A fragment of the reply') }),
  z.object({ kind: z.literal('error'), content: z.string().describe('What went wrong, for a person'), code: errorCode }),
  z.object({
    kind: z.literal('done'),
    session_id: z.string().nullable().describe('The session the conversation goes on in; send it back as the session_id query to resume it'),
    turn_id: z.string().nullable(),
  }),
]);
type AiResponse = z.output<typeof demoAiResponse>;

/** Messages a socket may have waiting (the one being answered included); the widget sends one at a time. */
const MAX_WAITING = 4;

const queryValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.trim() || null;

interface DemoState {
  agentId: string;
  sessionId: string | null;
  callerKey: string | null;
}

/**
 * The demo gateway (spec 6.4, demo only): a front end that cannot read server-sent events connects to `/demo` with
 * `agent_id` (an active `public_anonymous` agent) and sends `user_message`; each is one `POST /stream` turn as an
 * anonymous caller, with the same limits, answered as `ai_response` events. The first message starts a session that
 * the socket keeps; `session_id` in the query resumes one the host issued for that agent.
 */
export function attachDemoGateway(
  io: Server,
  domains: Pick<Domains, 'trafficLimits' | 'agents' | 'takeover' | 'chat'>,
  options: { clientAddress: (socket: Socket) => string | null; shutdown: AbortSignal; logger: Logger },
): void {
  const { trafficLimits: limits, agents, takeover, chat } = domains;
  const namespace = io.of(DEMO_NAMESPACE);

  namespace.use((socket, next) => {
    handshake(socket).then(
      (state) => {
        socket.data = state;
        next();
      },
      (error: Error) => next(new Error(error instanceof AgentHostError ? error.message : 'connection failed')),
    );
  });

  async function handshake(socket: Socket): Promise<DemoState> {
    const clientIp = options.clientAddress(socket);
    const refusal = await limits.takeHandshake(clientIp);
    if (refusal) throw new AgentHostError(429, refusal.detail, { code: 'RATE_LIMITED' });
    const agentId = queryValue(socket.handshake.query.agent_id);
    if (!agentId) throw new AgentHostError(422, 'agent_id is required: the demo gateway chats with one public agent');
    const agent = await agents.runtime(agentId).catch(() => undefined);
    // One refusal for an unknown, inactive or non-public agent, so a guess learns nothing.
    if (agent?.status !== 'active' || agent.public_access_mode !== 'public_anonymous') {
      throw new AgentHostError(404, `agent ${agentId} is not an active public_anonymous agent`, { code: 'AGENT_NOT_FOUND' });
    }
    const sessionId = queryValue(socket.handshake.query.session_id);
    if (sessionId) {
      const session = await takeover.issuedState(sessionId);
      if (session?.agent_id !== agentId) throw new AgentHostError(404, `session ${sessionId} not found for this agent; leave session_id out to start one`);
    }
    return { agentId, sessionId, callerKey: clientIp ? `ip:${clientIp}` : null };
  }

  namespace.on('connection', (socket) => {
    const state = socket.data as DemoState;
    const gone = new AbortController();
    socket.on('disconnect', () => gone.abort());
    let line = Promise.resolve();
    let waiting = 0;
    socket.on('user_message', (payload: unknown) => {
      const send = (response: AiResponse) => socket.emit('ai_response', response);
      if (waiting >= MAX_WAITING) {
        send({ kind: 'error', code: 'RATE_LIMITED', content: `too many messages waiting (${MAX_WAITING}); wait for the replies` });
        send({ kind: 'done', session_id: state.sessionId, turn_id: null });
        return;
      }
      waiting++;
      line = line
        .then(() => answer(state, payload, send, AbortSignal.any([gone.signal, options.shutdown])))
        .catch((err: unknown) => {
          options.logger.error({ err, component: 'demo-gateway' }, 'demo gateway message failed');
          send({ kind: 'error', code: 'INTERNAL_ERROR', content: 'the message failed; please try again' });
          send({ kind: 'done', session_id: state.sessionId, turn_id: null });
        })
        .finally(() => waiting--);
    });
  });

  /** One message as a `POST /stream` turn: a refusal is an `error`, and `done` always ends the answer. */
  async function answer(state: DemoState, payload: unknown, send: (response: AiResponse) => void, signal: AbortSignal): Promise<void> {
    const refuse = (code: ErrorCode, content: string) => {
      send({ kind: 'error', code, content });
      send({ kind: 'done', session_id: state.sessionId, turn_id: null });
    };
    const message = safeValidate(demoUserMessage, payload);
    if (!message.success) return refuse('VALIDATION_FAILED', message.issues.map((issue) => `${issue.loc.join('.') || 'message'}: ${issue.msg}`).join('; '));
    const issuedSession = state.sessionId === null;
    const request = safeValidate(chatRequestSchema, {
      thread_id: state.sessionId ?? issueSessionId(),
      agent_id: state.agentId,
      message: message.data.content,
      time_zone: message.data.time_zone,
    });
    if (!request.success) return refuse('VALIDATION_FAILED', request.issues.map((issue) => issue.msg).join('; '));
    let admitted;
    try {
      // The gateway stands in for a browser's POST /stream, so the turn takes that channel's path (quick match too).
      admitted = await chat.admit(request.data, { principal: undefined, callerKey: state.callerKey, channel: 'http', issuedSession });
    } catch (error) {
      if (error instanceof ValidationError) return refuse(error.code, error.issues.map((issue) => issue.msg).join('; '));
      if (error instanceof AgentHostError) return refuse(error.code, error.message);
      throw error;
    }
    state.sessionId = request.data.thread_id ?? null;
    for await (const event of chat.stream(admitted, signal)) {
      if (event.type === 'token') send({ kind: 'token', content: event.content });
      else if (event.type === 'error') send({ kind: 'error', code: event.code, content: event.content });
      else send({ kind: 'done', session_id: event.session_id ?? state.sessionId, turn_id: event.turn_id ?? null });
    }
  }
}
