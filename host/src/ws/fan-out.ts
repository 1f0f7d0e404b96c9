import type { AdminPrincipal, SessionBroadcast } from '@agent-host/core';
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
