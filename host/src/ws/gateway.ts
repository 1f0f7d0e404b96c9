import type { Server as HttpServer } from 'node:http';
import { chatRequestSchema, operatorFor, type AgentHostApp, type Domains, type Operator, type SessionBroadcast, type SessionState } from '@agent-host/core';
import { AgentHostError, safeValidate, ValidationError } from '@agent-host/sdk';
import { createAdapter } from '@socket.io/postgres-adapter';
import { Server, type Namespace, type Socket } from 'socket.io';
import { Adapter } from 'socket.io-adapter';
import { crossSiteRefusal } from '../access/browser-origin.js';
import { clientAddressReader } from '../access/client-address.js';
import { ACCESS_COOKIE, readCookie } from '../access/cookies.js';
import { createAdapterPool } from './adapter-pool.js';
import { attachDemoGateway } from './demo-gateway.js';
import { close, RoomFanOut, type Closure, type Held, type JoinView, type SocketState } from './fan-out.js';
import { parseMessageTag, readInbound, type InboundPayload } from './inbound.js';
import { ANNOUNCE_GRACE_MS, HEARTBEAT_INTERVAL_MS, peerRelay } from './peer-relay.js';

/** Inbound events a socket may have waiting (the one being handled included); more are refused with an `error`. */
export const MAX_WAITING_EVENTS = 8;
/** Spec 4.3 and 8: the history sent on connect holds at most this many messages. */
export const HISTORY_LIMIT = 200;
const ADMIN_NAMESPACE = /^\/ws\/([^/]+)$/;
const PUBLIC_NAMESPACE = /^\/public\/ws\/([^/]+)$/;
/** Server-side event carrying a session broadcast to the other instances. */
const BROADCAST_EVENT = 'agent-host:session-broadcast';

interface ConnectionState extends SocketState {
  public: boolean;
  role: 'customer' | 'operator';
  operatorId: string | null;
  operatorName: string | null;
  agentId: string | null;
  clientIp: string | null;
  /** A customer's view of its session, read at the handshake, and what the session was sent since (`RoomFanOut.admit`). */
  early?: { view: JoinView; held: Held };
}

/** A refusal shown to the client (connect_error message, or an `error` event). */
class Refused extends Error {}

/** The text a refusal shows: its message, or a validation failure's issue messages. */
function shownDetail(error: unknown): string | undefined {
  if (error instanceof Refused) return error.message;
  const { status, detail } = error as { status?: number; detail?: unknown };
  if (status === undefined) return undefined;
  return Array.isArray(detail) ? detail.map((issue: { msg: string }) => issue.msg).join('; ') : (error as Error).message;
}

export interface Gateway {
  /** Sockets connected to this instance. */
  readonly socketCount: number;
  close(): Promise<void>;
}

/** The public namespace serves only sessions of an active `public_anonymous` agent. */
const isPublicAgent = (agent: { status: string; public_access_mode: string } | undefined) =>
  agent?.status === 'active' && agent.public_access_mode === 'public_anonymous';

const queryValue = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.trim() || null;

/**
 * The WebSocket gateway (spec 4.3, 6.2, 6.3): socket.io on the host's HTTP
 * server, namespace `/ws/{session_id}` for administrators and
 * `/public/ws/{session_id}` for anonymous customers, one room per session.
 * Whatever the chat and takeover services publish is delivered to the
 * session's sockets on this instance and, through the Postgres adapter, on
 * every other instance.
 */
export function createGateway(
  domains: Pick<Domains, 'adminAuth' | 'trafficLimits' | 'sessionEvents' | 'agents' | 'takeover' | 'chat'>,
  app: Pick<AgentHostApp, 'logger' | 'config' | 'databaseUrl'>,
  httpServer: HttpServer,
): Gateway {
  const { adminAuth: auth, trafficLimits: limits, sessionEvents, agents, takeover, chat } = domains;
  const log = app.logger.child({ component: 'ws' });
  const clientAddress = clientAddressReader(app.config.server.trusted_proxies);
  const fanOutPool = createAdapterPool(app.databaseUrl, (err) => log.warn({ err }, 'websocket fan-out connection error'));
  const postgresAdapter = createAdapter(fanOutPool.pool, {
    heartbeatInterval: HEARTBEAT_INTERVAL_MS,
    errorHandler: (err) => log.warn({ err }, 'websocket fan-out error'),
  });
  // Only the main namespace goes through Postgres: a per-session namespace would LISTEN on a channel named
  // after the session (Postgres caps channel names at 63 bytes). Broadcasts cross instances as server-side
  // events on "/", and each instance delivers them to its own sockets.
  const adapterFor = function (nsp: Namespace) {
    return nsp.name === '/' ? postgresAdapter(nsp) : new Adapter(nsp);
  } as unknown as typeof Adapter;
  const corsOrigins = app.config.server.cors_origins;
  const io = new Server(httpServer, {
    adapter: adapterFor,
    serveClient: false,
    cleanupEmptyChildNamespaces: true,
    // A handshake with the administrator's cookie from another site's page is refused, as for HTTP.
    allowRequest: (req, accept) => {
      const refusal = crossSiteRefusal(req, corsOrigins);
      accept(refusal ?? null, refusal === undefined);
    },
    ...(corsOrigins.length > 0 && { cors: { origin: [...corsOrigins], credentials: true } }),
  });
  const shutdown = new AbortController();
  const fanOut = new RoomFanOut(
    (principal) => auth.currentPrincipal(principal),
    (err) => log.error({ err }, 'websocket delivery failed'),
  );

  const relay = peerRelay(io.of('/').adapter, (broadcast) => io.serverSideEmit(BROADCAST_EVENT, broadcast));
  const unsubscribe = sessionEvents.subscribe((broadcast) => {
    void fanOut.deliver(broadcast);
    void relay(broadcast);
  });
  const announced = new Promise<void>((resolve) => setTimeout(resolve, ANNOUNCE_GRACE_MS).unref());
  io.on(BROADCAST_EVENT, (broadcast: SessionBroadcast) => void fanOut.deliver(broadcast));

  if (app.config.demo_gateway.enabled) {
    attachDemoGateway(io, domains, { clientAddress: (socket) => clientAddress(socket.request), shutdown: shutdown.signal, logger: log });
  }

  for (const [pattern, isPublic] of [
    [ADMIN_NAMESPACE, false],
    [PUBLIC_NAMESPACE, true],
  ] as const) {
    const namespace = io.of(pattern);
    namespace.use((socket, next) => {
      announced
        .then(() => handshake(socket, isPublic))
        .then(
          () => next(),
          (error: Error) => next(new Error(shownDetail(error) ?? 'connection failed')),
        );
    });
    namespace.on('connection', onConnection);
  }

  /** Authenticates, reads the query and opens the session; the state lands on `socket.data`. */
  async function handshake(socket: Socket, isPublic: boolean): Promise<void> {
    const match = (isPublic ? PUBLIC_NAMESPACE : ADMIN_NAMESPACE).exec(socket.nsp.name)!;
    const sessionId = decodeURIComponent(match[1]!);
    const query = socket.handshake.query;
    const state: ConnectionState = {
      sessionId,
      public: isPublic,
      role: queryValue(query.role) === 'operator' ? 'operator' : 'customer',
      operatorId: queryValue(query.operator_id),
      operatorName: queryValue(query.operator_name),
      agentId: queryValue(query.agent_id),
      clientIp: clientAddress(socket.request),
    };
    if (!isPublic) return adminHandshake(socket, state);
    // A customer's handshake takes its minute budget in the statement that reads the session it joins and what the
    // socket is sent first; what the session is sent from then until the socket joins is held for it.
    const held = fanOut.hold(sessionId);
    try {
      const joining = await takeover.issuedJoining(sessionId, limits.handshakeBuckets(state.clientIp), HISTORY_LIMIT);
      if (joining.refusal) throw new Refused(joining.refusal.detail);
      checkRole(query.role);
      if (state.role === 'operator') throw new Refused('the public WebSocket serves customers only; operators connect to /ws/{session_id}');
      const session = await publicSession(sessionId, state.agentId, joining.state);
      state.agentId = session.agent_id;
      state.early = { view: { messages: joining.messages, session: joining.state }, held };
    } catch (error) {
      held.release();
      throw error;
    }
    socket.data = state;
  }

  /** The query's `role`, when given, is one the namespaces know. */
  function checkRole(role: string | string[] | undefined): void {
    const value = queryValue(role);
    if (value && value !== 'customer' && value !== 'operator') throw new Refused('role must be customer or operator');
  }

  /** An administrator's handshake: the address's budget, the administrator's session, the session it opens. */
  async function adminHandshake(socket: Socket, state: ConnectionState): Promise<void> {
    const query = socket.handshake.query;
    const refusal = await limits.takeHandshake(state.clientIp);
    if (refusal) throw new Refused(refusal.detail);
    checkRole(query.role);
    const token = readCookie(socket.handshake.headers, ACCESS_COOKIE);
    const principal = token ? await auth.authenticate(token) : undefined;
    if (!principal) throw new Refused(token ? 'administrator session expired or revoked; log in again' : 'administrator login required');
    if (!principal.permissions.includes('conversations.read')) throw new Refused('missing permission conversations.read');
    // Refused now rather than at the first takeover: an operator acts only as itself.
    if (state.role === 'operator' && state.operatorId) operatorFor(principal, 'websocket', { operator_id: state.operatorId });
    state.principal = principal;
    const session = await adminSession(state.sessionId, state.agentId);
    state.agentId = session.agent_id;
    socket.data = state;
  }

  /** Administrators join any session; an unknown one is created bound to the query's agent. */
  async function adminSession(sessionId: string, agentId: string | null) {
    if (agentId && !(await agents.get(agentId).catch(() => undefined))) throw new Refused(`agent ${agentId} not found`);
    const session = await takeover.open(sessionId, agentId);
    if (!session) throw new Refused(`session ${sessionId} not found; pass agent_id to start a new session`);
    return session;
  }

  /**
   * Customers join only a session the server issued to an anonymous client (`session`, read at the handshake), of an
   * agent that is still public (and the query's agent, when it names one). One refusal for every case, so a guess
   * learns nothing.
   */
  async function publicSession(sessionId: string, agentId: string | null, session: SessionState | undefined) {
    if (!session || (agentId && session.agent_id !== agentId) || !(await servesPublicly(session.agent_id))) {
      throw new Refused(`session ${sessionId} not found; start one with POST /public/agents/{agent_id}/sessions or POST /stream without thread_id`);
    }
    return session;
  }

  function onConnection(socket: Socket): void {
    const state = socket.data as ConnectionState;
    void socket.join(state.sessionId);
    // In turn with the session's broadcasts, so nothing published meanwhile arrives before the history, or is missed.
    void fanOut.admit(socket, () => takeover.joined(state.sessionId, HISTORY_LIMIT), state.early);
    delete state.early;
    // One inbound event at a time per socket, in the order sent, and only a few waiting: each can be a whole turn,
    // and a client that sends faster than they are answered is told so rather than queued without end.
    let inbound = Promise.resolve();
    let waiting = 0;
    socket.onAny((name: string, ...args: unknown[]) => {
      const ack = typeof args.at(-1) === 'function' ? (args.pop() as (reply: unknown) => void) : undefined;
      if (waiting >= MAX_WAITING_EVENTS) {
        const detail = `too many events in flight (${MAX_WAITING_EVENTS}); wait for the answers before sending more`;
        socket.emit('error', { type: 'error', session_id: state.sessionId, detail, code: 'TOO_MANY_EVENTS' });
        ack?.({ ok: false, detail });
        return;
      }
      waiting++;
      inbound = inbound.then(() => handle(socket, state, name, args[0], ack)).finally(() => waiting--);
    });
  }

  async function handle(socket: Socket, state: ConnectionState, name: string, payload: unknown, ack?: (reply: unknown) => void): Promise<void> {
    const fail = (detail: string) => {
      socket.emit('error', { type: 'error', session_id: state.sessionId, detail, code: 'MESSAGE_REFUSED' });
      ack?.({ ok: false, detail });
    };
    try {
      const closure = state.public ? await publicClosure(state) : (await fanOut.recheck([socket]))[0];
      if (closure) {
        ack?.({ ok: false, detail: closure.detail });
        close(socket, closure);
        return;
      }
      const event = readInbound(name, payload);
      if (typeof event === 'string') return fail(event);
      if (event.event === 'agent_takeover') await takeover.takeover(state.sessionId, operatorOf(state), event.force ?? false);
      else if (event.event === 'agent_release') await takeover.release(state.sessionId, operatorOf(state), event.force ?? false);
      else if (state.role === 'operator') await takeover.manualMessage(state.sessionId, operatorOf(state), event.content ?? '');
      else {
        const errors = await customerMessage(state, event);
        if (errors.length) return fail(errors.join('; '));
      }
      ack?.({ ok: true });
    } catch (error) {
      const detail = shownDetail(error);
      if (detail !== undefined) return fail(detail);
      log.error({ err: error, event: name }, 'websocket event failed');
      fail('the event failed; please try again');
    }
  }

  /** Operator actions need `role=operator`, an `operator_id` and `conversations.write`; never on the public namespace. */
  function operatorOf(state: ConnectionState): Operator {
    if (state.public) throw new Refused('the public WebSocket cannot take over, release or reply by hand');
    if (state.role !== 'operator') throw new Refused('connect with role=operator to take over, release or reply by hand');
    if (!state.operatorId) throw new Refused('operator_id is required to take over, release or reply by hand');
    // The permissions re-read before this event, not those of the handshake.
    if (!state.principal!.permissions.includes('conversations.write')) throw new Refused('missing permission conversations.write');
    return operatorFor(state.principal!, 'websocket', { operator_id: state.operatorId, operator_name: state.operatorName, client_ip: state.clientIp });
  }

  /**
   * Whether the public namespace serves the sessions of an agent (by id; none for a session without one). Asked at
   * every handshake and customer event, so read through the runtime config cache, which every change to the agent
   * clears on every instance.
   */
  async function servesPublicly(agentId: string | null): Promise<boolean> {
    return isPublicAgent(agentId ? await agents.runtime(agentId).catch(() => undefined) : undefined);
  }

  /** A public socket stops being served once its session's agent is no longer public. */
  async function publicClosure(state: ConnectionState): Promise<Closure | undefined> {
    if (await servesPublicly(state.agentId)) return undefined;
    return { detail: `session ${state.sessionId} is no longer public: its agent is not an active public_anonymous agent`, code: 'SESSION_NOT_PUBLIC' };
  }

  /** The same pipeline as `POST /stream`; the stored messages reach the room as `message` events. */
  async function customerMessage(state: ConnectionState, event: InboundPayload): Promise<string[]> {
    const { message_type, body } = parseMessageTag(event.content ?? '');
    const request = safeValidate(chatRequestSchema, {
      thread_id: state.sessionId,
      agent_id: state.agentId,
      message: body,
      message_type: message_type ?? event.message_type,
      model_name: event.model_name,
      model_provider: event.model_provider,
      model_temperature: event.model_temperature,
      time_zone: event.time_zone,
    });
    if (!request.success) return request.issues.map((i) => `${i.loc.join('.')}: ${i.msg}`);
    const callerKey = state.principal ? `admin:${state.principal.admin_user_id}` : state.clientIp ? `ip:${state.clientIp}` : null;
    let admitted;
    try {
      admitted = await chat.admit(request.data, { principal: state.principal, callerKey, channel: 'websocket' });
    } catch (error) {
      if (error instanceof ValidationError) return error.issues.map((issue) => issue.msg);
      if (error instanceof AgentHostError) return [error.message];
      throw error;
    }
    const errors: string[] = [];
    for await (const streamed of chat.stream(admitted, shutdown.signal)) {
      if (streamed.type === 'error') errors.push(streamed.content);
    }
    return errors;
  }

  return {
    get socketCount() {
      return fanOut.socketCount;
    },
    async close() {
      unsubscribe();
      shutdown.abort();
      io.local.disconnectSockets(true);
      io.engine.close();
      await io.of('/').adapter.close();
      await fanOutPool.close();
    },
  };
}
