import type { AdminPrincipal, PresentedMessage, SessionBroadcast, SessionState } from '@agent-host/core';
import type { Namespace, Socket } from 'socket.io';
import type { ErrorCode } from '@agent-host/sdk';

/** What the gateway keeps on each socket (`socket.data`). */
export interface SocketState {
  sessionId: string;
  /** Set on administrator sockets (`/ws/...`): re-read before every send, so it carries the current permissions. */
  principal?: AdminPrincipal;
}

/** The payload of each outgoing type (docs/websocket.md). */
export function outgoing(broadcast: SessionBroadcast): Record<string, unknown> {
  switch (broadcast.type) {
    case 'message':
      return { type: 'message', session_id: broadcast.session_id, message: broadcast.message };
    case 'session':
      return { type: 'session', ...broadcast.session };
    case 'system':
      return { type: 'system', session_id: broadcast.session_id, status: broadcast.status, event_type: broadcast.event_type, message: broadcast.message };
    case 'takeover_event':
      return { type: 'takeover_event', session_id: broadcast.session_id, event: broadcast.event };
    case 'tool_approval':
      return { type: 'tool_approval', session_id: broadcast.session_id, approval: broadcast.approval };
    case 'handoff_requested':
      return { type: 'handoff_requested', session_id: broadcast.session_id, handoff: broadcast.handoff };
  }
}

/** What a socket is sent first when it joins its session: the latest messages and the session's state. */
export interface JoinView {
  messages: PresentedMessage[];
  session: SessionState | undefined;
}

/** A send to a whole session (not to one socket), as `RoomFanOut.send` got it. */
interface RoomSend {
  type: string;
  payload: Record<string, unknown>;
  adminsOnly: boolean;
}

/**
 * What a session's sockets were sent while a socket that read its {@link JoinView} early (at its handshake) was not
 * yet among them: sent to it after that view, so it misses nothing. Past {@link HOLD_LIMIT} sends or
 * {@link HOLD_MS}, it stops recording and the socket reads its view again when it joins.
 */
export interface Held {
  /** What the session was sent since the hold began. */
  readonly sends: readonly RoomSend[];
  /** Stops recording; whether everything since the hold began was recorded. */
  release(): boolean;
}

const HOLD_LIMIT = 500;
const HOLD_MS = 30_000;

/** The id of the stored message a broadcast carries (a `message` or a takeover's `system` message), if any. */
const messageIdOf = (payload: Record<string, unknown>) => (payload.message as { message_id?: string } | undefined)?.message_id;

/** Why a socket is closed: its administrator session ended or lost conversations.read, or its session stopped being public. */
export interface Closure {
  detail: string;
  code: Extract<ErrorCode, 'SESSION_REVOKED' | 'PERMISSION_REVOKED' | 'SESSION_NOT_PUBLIC'>;
}

export const SESSION_REVOKED: Closure = { detail: 'administrator session ended (logged out, expired or revoked); log in again', code: 'SESSION_REVOKED' };
const READ_REVOKED: Closure = { detail: 'missing permission conversations.read; this socket may no longer watch the session', code: 'PERMISSION_REVOKED' };

/**
 * This instance's sockets by session. Sends to one session run one at a
 * time, so every client sees a session's events in the order they happened;
 * administrator sockets are re-checked before each send and, when their
 * session ended or they lost `conversations.read`, told why and closed
 * instead of being sent to.
 */
export class RoomFanOut {
  private readonly rooms = new Map<string, Set<Socket>>();
  private readonly chains = new Map<string, Promise<void>>();
  private readonly holds = new Map<string, Set<RoomSend[]>>();

  constructor(
    /** The administrator session's principal now (current permissions), or `undefined` once it ended. */
    private readonly currentPrincipal: (principal: AdminPrincipal) => Promise<AdminPrincipal | undefined>,
    private readonly onError: (error: unknown) => void,
  ) {}

  join(socket: Socket): void {
    const { sessionId } = socket.data as SocketState;
    let room = this.rooms.get(sessionId);
    if (!room) this.rooms.set(sessionId, (room = new Set()));
    room.add(socket);
    socket.once('disconnect', () => {
      room.delete(socket);
      if (room.size === 0 && this.rooms.get(sessionId) === room) this.rooms.delete(sessionId);
    });
  }

  /** Starts recording what the session's sockets are sent, for a socket about to read its {@link JoinView} (`admit`). */
  hold(sessionId: string): Held {
    const sends: RoomSend[] = [];
    let holds = this.holds.get(sessionId);
    if (!holds) this.holds.set(sessionId, (holds = new Set()));
    holds.add(sends);
    let complete = true;
    const stop = () => {
      holds.delete(sends);
      if (holds.size === 0 && this.holds.get(sessionId) === holds) this.holds.delete(sessionId);
      clearTimeout(timer);
    };
    // A handshake whose socket never connects must not record for ever.
    const timer = setTimeout(() => {
      complete = false;
      stop();
    }, HOLD_MS);
    timer.unref();
    return {
      sends,
      release: () => {
        stop();
        return complete && sends.length <= HOLD_LIMIT;
      },
    };
  }

  /**
   * Adds a socket to its session, in turn with the session's sends: first its view, then (when `held` recorded
   * everything since `view` was read) what the session was sent meanwhile, without the messages the view already
   * holds. With no view, or an incomplete hold, `read` reads the view in turn, so nothing sent after it is missed.
   */
  admit(socket: Socket, read: () => Promise<JoinView>, early?: { view: JoinView; held: Held }): Promise<void> {
    const { sessionId } = socket.data as SocketState;
    return this.enqueue(sessionId, async () => {
      const recorded = early?.held.release() ? early : undefined;
      if (socket.disconnected) return;
      this.join(socket);
      const view = recorded?.view ?? (await read());
      await this.send(sessionId, 'history', { type: 'history', session_id: sessionId, messages: view.messages }, socket);
      await this.send(sessionId, 'session', { type: 'session', ...view.session }, socket);
      if (!recorded) return;
      const shown = new Set(view.messages.map((m) => m.message_id));
      for (const { type, payload, adminsOnly } of recorded.held.sends) {
        const id = messageIdOf(payload);
        if (id === undefined || !shown.has(id)) await this.send(sessionId, type, payload, socket, adminsOnly);
      }
    });
  }

  get socketCount(): number {
    let count = 0;
    for (const room of this.rooms.values()) count += room.size;
    return count;
  }

  /** Runs `task` after every earlier task of the session. */
  enqueue(sessionId: string, task: () => Promise<void>): Promise<void> {
    const next = (this.chains.get(sessionId) ?? Promise.resolve()).then(task).catch(this.onError);
    this.chains.set(sessionId, next);
    void next.then(() => {
      if (this.chains.get(sessionId) === next) this.chains.delete(sessionId);
    });
    return next;
  }

  deliver(broadcast: SessionBroadcast): Promise<void> {
    // A held tool call shows the tool and its arguments, a handoff flags the session: for operators, not the customer.
    const adminsOnly = broadcast.type === 'tool_approval' || broadcast.type === 'handoff_requested';
    return this.enqueue(broadcast.session_id, () => this.send(broadcast.session_id, broadcast.type, outgoing(broadcast), undefined, adminsOnly));
  }

  /**
   * Re-reads the administrator behind each socket (once per administrator
   * session) and leaves the current principal, with its permissions, on the
   * socket. Resolves with why each socket must close, `undefined` for those
   * that may stay; closing is the caller's.
   */
  async recheck(sockets: Socket[]): Promise<(Closure | undefined)[]> {
    const current = new Map<string, Promise<AdminPrincipal | undefined>>();
    return Promise.all(
      sockets.map(async (socket) => {
        const state = socket.data as SocketState;
        if (!state.principal) return undefined;
        let lookup = current.get(state.principal.session_id);
        if (!lookup) current.set(state.principal.session_id, (lookup = this.currentPrincipal(state.principal)));
        const principal = await lookup;
        if (!principal) return SESSION_REVOKED;
        state.principal = principal;
        return principal.permissions.includes('conversations.read') ? undefined : READ_REVOKED;
      }),
    );
  }

  /**
   * Sends to every admitted socket of the session on this instance: customers' sockets at once, administrators' once
   * re-checked, so a room an operator watches does not make its customers wait for that check.
   */
  async send(sessionId: string, type: string, payload: Record<string, unknown>, only?: Socket, adminsOnly = false): Promise<void> {
    if (!only) for (const sends of this.holds.get(sessionId) ?? []) if (sends.length <= HOLD_LIMIT) sends.push({ type, payload, adminsOnly });
    const customers: Socket[] = [];
    const admins: Socket[] = [];
    for (const socket of only ? [only] : (this.rooms.get(sessionId) ?? [])) ((socket.data as SocketState).principal ? admins : customers).push(socket);
    if (!adminsOnly) emit(customers, type, payload);
    if (admins.length === 0) return;
    const closures = await this.recheck(admins);
    emit(
      admins.filter((socket, i) => {
        const closure = closures[i];
        if (closure) close(socket, closure);
        return !closure;
      }),
      type,
      payload,
    );
  }
}

/** One emit per namespace, so each packet is encoded once rather than once per socket. */
function emit(sockets: Socket[], type: string, payload: Record<string, unknown>): void {
  const byNamespace = new Map<Namespace, string[]>();
  for (const socket of sockets) {
    const ids = byNamespace.get(socket.nsp);
    if (ids) ids.push(socket.id);
    else byNamespace.set(socket.nsp, [socket.id]);
  }
  for (const [namespace, ids] of byNamespace) namespace.local.to(ids).emit(type, payload);
}

/** Tells a socket why it may not stay, then closes it. */
export function close(socket: Socket, closure: Closure): void {
  if (socket.disconnected) return;
  socket.emit('error', { type: 'error', ...closure });
  socket.disconnect(true);
}
