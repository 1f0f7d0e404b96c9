import type { AdminPrincipal, SessionBroadcast } from '@agent-host/core';
import type { Namespace, Socket } from 'socket.io';

/** What the gateway keeps on each socket (`socket.data`). */
export interface SocketState {
  sessionId: string;
  /** Set on administrator sockets (`/ws/...`), whose session is re-checked before every send. */
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
  }
}

export const REVOKED_DETAIL = 'administrator session ended (logged out, expired or revoked); log in again';

/**
 * This instance's sockets by session. Sends to one session run one at a
 * time, so every client sees a session's events in the order they happened;
 * administrator sockets whose session has ended are told why and closed
 * instead of being sent to.
 */
export class RoomFanOut {
  private readonly rooms = new Map<string, Set<Socket>>();
  private readonly chains = new Map<string, Promise<void>>();

  constructor(
    private readonly isLive: (principal: AdminPrincipal) => Promise<boolean>,
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
    return this.enqueue(broadcast.session_id, () => this.send(broadcast.session_id, broadcast.type, outgoing(broadcast)));
  }

  /** Sends to every live socket of the session on this instance; each administrator session is checked once. */
  async send(sessionId: string, type: string, payload: Record<string, unknown>, only?: Socket): Promise<void> {
    const sockets = only ? [only] : [...(this.rooms.get(sessionId) ?? [])];
    const verdicts = new Map<string, Promise<boolean>>();
    const live = await Promise.all(
      sockets.map((socket) => {
        const { principal } = socket.data as SocketState;
        if (!principal) return true;
        let verdict = verdicts.get(principal.session_id);
        if (!verdict) verdicts.set(principal.session_id, (verdict = this.isLive(principal)));
        return verdict;
      }),
    );
    // One emit per namespace, so each packet is encoded once rather than once per socket.
    const byNamespace = new Map<Namespace, string[]>();
    sockets.forEach((socket, i) => {
      if (!live[i]) return revoke(socket);
      const ids = byNamespace.get(socket.nsp);
      if (ids) ids.push(socket.id);
      else byNamespace.set(socket.nsp, [socket.id]);
    });
    for (const [namespace, ids] of byNamespace) namespace.local.to(ids).emit(type, payload);
  }
}

/** Tells an administrator socket its session ended, then closes it. */
export function revoke(socket: Socket): void {
  if (socket.disconnected) return;
  socket.emit('error', { type: 'error', detail: REVOKED_DETAIL, code: 'session_revoked' });
  socket.disconnect(true);
}
