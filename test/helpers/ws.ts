import Ajv2020 from 'ajv/dist/2020.js';
import { io, type Socket } from 'socket.io-client';
import { buildAsyncApiDocument } from '../../host/src/openapi/asyncapi-document.js';

interface Received {
  type: string;
  payload: any;
}

/** The AsyncAPI document's check of each event the server sends: the WebSocket contract, verified on every payload. */
const contract = (() => {
  const document = buildAsyncApiDocument('test') as { components: { messages: Record<string, unknown> } };
  const ajv = new Ajv2020({ strict: false, allErrors: true, formats: { uuid: true, 'date-time': true } });
  ajv.addSchema({ $id: 'asyncapi', components: document.components });
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  return (type: string, payload: unknown): string | undefined => {
    if (type === 'disconnect') return undefined;
    if (!(type in document.components.messages)) return `the server sent "${type}", which /asyncapi.json does not describe`;
    let validate = validators.get(type);
    if (!validate) validators.set(type, (validate = ajv.compile({ $ref: `asyncapi#/components/messages/${type}/payload` })));
    return validate(payload) ? undefined : `"${type}" payload breaks /asyncapi.json: ${ajv.errorsText(validate.errors)} in ${JSON.stringify(payload)}`;
  };
})();

/** A socket.io client that records every event it receives, for tests that wait on them. */
export class WsClient {
  readonly received: Received[] = [];
  /** Payloads that do not match the AsyncAPI document; `waitFor` and `close` fail on them. */
  readonly violations: string[] = [];
  private readonly waiters = new Set<() => void>();

  private constructor(readonly socket: Socket) {
    socket.onAny((type: string, payload: unknown) => {
      const violation = contract(type, payload);
      if (violation) this.violations.push(violation);
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
    if (this.violations.length) return Promise.reject(new Error(this.violations.join('\n')));
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
        if (this.violations.length) reject(new Error(this.violations.join('\n')));
        else resolve(hit.payload);
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

  /** Closes the socket; throws when any payload received broke the AsyncAPI document. */
  close(): void {
    this.socket.close();
    if (this.violations.length) throw new Error(this.violations.join('\n'));
  }
}
