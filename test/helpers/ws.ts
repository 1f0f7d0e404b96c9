import { io, type Socket } from 'socket.io-client';

interface Received {
  type: string;
  payload: any;
}

/** A socket.io client that records every event it receives, for tests that wait on them. */
export class WsClient {
  readonly received: Received[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: Socket) {
    socket.onAny((type: string, payload: unknown) => {
      this.received.push({ type, payload });
      for (const wake of this.waiters) wake();
    });
    socket.on('disconnect', () => {
      this.received.push({ type: 'disconnect', payload: null });
      for (const wake of this.waiters) wake();
    });
  }

  /**
   * Connects to `namespace` (`/ws/<id>` or `/public/ws/<id>`) over WebSocket;
   * rejects with the server's refusal message.
   */
  static connect(baseUrl: string, namespace: string, options: { query?: Record<string, string>; cookie?: string; origin?: string } = {}): Promise<WsClient> {
    const socket = io(baseUrl + namespace, {
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
      query: options.query ?? {},
      extraHeaders: { ...(options.cookie && { cookie: options.cookie }), ...(options.origin && { origin: options.origin }) },
    });
    const client = new WsClient(socket);
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(client));
      socket.once('connect_error', (error) => {
        socket.close();
        reject(error);
      });
    });
  }

  /** The first received event of `type` matching `match` (already received or still to come). */
  waitFor(type: string, match: (payload: any) => boolean = () => true, timeoutMs = 10_000): Promise<any> {
    const find = () => this.received.find((r) => r.type === type && match(r.payload));
    const found = find();
    if (found) return Promise.resolve(found.payload);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`no ${type} event in ${timeoutMs} ms; received ${JSON.stringify(this.received.map((r) => r.type))}`));
      }, timeoutMs);
      const wake = () => {
        const hit = find();
        if (!hit) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(hit.payload);
      };
      this.waiters.add(wake);
    });
  }

  of(type: string): any[] {
    return this.received.filter((r) => r.type === type).map((r) => r.payload);
  }

  /** Emits an event and resolves with the server's acknowledgement. */
  send(event: string, payload: unknown = {}, timeoutMs = 15_000): Promise<{ ok: boolean; detail?: string }> {
    return this.socket.timeout(timeoutMs).emitWithAck(event, payload);
  }

  close(): void {
    this.socket.close();
  }
}
