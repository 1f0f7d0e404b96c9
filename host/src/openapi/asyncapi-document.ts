import { ACCESS_COOKIE } from '../access/cookies.js';
import { acknowledgementSchema, INBOUND_PAYLOADS, OUTBOUND_EVENTS } from '../ws/contract.js';
import { bodySchema } from './openapi-document.js';

type JsonObject = Record<string, unknown>;

const channel = (address: string, description: string, messages: string[]): JsonObject => ({
  address,
  description,
  parameters: { session_id: { description: 'The chat session (a public session: the id POST /public/agents/{agent_id}/sessions or POST /stream issued)' } },
  bindings: { ws: { method: 'GET', bindingVersion: '0.1.0' } },
  messages: Object.fromEntries(messages.map((name) => [name, { $ref: `#/components/messages/${name}` }])),
});

/**
 * The AsyncAPI 3.0 description of the WebSocket interface: socket.io namespaces `/ws/{session_id}` (administrators)
 * and `/public/ws/{session_id}` (customers), the events each side sends, and their payloads.
 */
export function buildAsyncApiDocument(version: string): JsonObject {
  // Shared sub-schemas (Message, TakeoverEvent) are hoisted here, as in /openapi.json.
  const schemas: Record<string, any> = {};
  const payloadSchema = (schema: Parameters<typeof bodySchema>[0]) => bodySchema(schema, schemas, 'output');
  const outbound = Object.keys(OUTBOUND_EVENTS);
  const inbound = Object.keys(INBOUND_PAYLOADS);
  const messages: Record<string, JsonObject> = {};
  for (const [name, event] of Object.entries(OUTBOUND_EVENTS)) messages[name] = { name, title: name, summary: event.summary, payload: payloadSchema(event.payload) };
  for (const [name, event] of Object.entries(INBOUND_PAYLOADS)) {
    const key = name === 'message' || name === 'user_message' ? `send_${name}` : name;
    messages[key] = { name, title: name, summary: event.summary, payload: payloadSchema(event.payload) };
  }
  const inboundKeys = inbound.map((name) => (name === 'message' || name === 'user_message' ? `send_${name}` : name));
  const operations: Record<string, JsonObject> = {};
  for (const [id, address] of [['ws', 'admin'], ['publicWs', 'public']] as const) {
    const sendable = address === 'public' ? inboundKeys.filter((k) => k === 'send_user_message' || k === 'send_message') : inboundKeys;
    operations[`${id}Receive`] = {
      action: 'send',
      channel: { $ref: `#/channels/${id}` },
      summary: 'The server sends these events',
      messages: outbound.filter((name) => address === 'admin' || name !== 'tool_approval').map((name) => ({ $ref: `#/channels/${id}/messages/${name}` })),
    };
    operations[`${id}Send`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${id}` },
      summary: 'The server receives these events; each is acknowledged with {ok: true} or {ok: false, detail}',
      messages: sendable.map((name) => ({ $ref: `#/channels/${id}/messages/${name}` })),
      reply: { messages: [{ $ref: '#/components/messages/acknowledgement' }] },
    };
  }
  messages.acknowledgement = { name: 'acknowledgement', title: 'acknowledgement', summary: 'The answer to an inbound event', payload: payloadSchema(acknowledgementSchema) };
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'agent-host WebSocket',
      version,
      description:
        'socket.io (Engine.IO 4) namespaces per chat session. Right after connecting the server sends `history`, then `session`. Errors carry a `code` of docs/error-codes.md. Prose: docs/websocket.md.',
    },
    defaultContentType: 'application/json',
    channels: {
      ws: channel('/ws/{session_id}', 'Administrators: the access cookie and conversations.read; role=operator (with conversations.write) takes over and replies', [...outbound, ...inboundKeys]),
      publicWs: channel('/public/ws/{session_id}', "Customers of a public_anonymous agent's server-issued sessions; no login", [
        ...outbound.filter((name) => name !== 'tool_approval'),
        'send_user_message',
        'send_message',
      ]),
    },
    operations,
    components: {
      schemas,
      messages,
      securitySchemes: { [ACCESS_COOKIE]: { type: 'httpApiKey', in: 'cookie', name: ACCESS_COOKIE, description: 'The administrator access cookie (POST /admin/auth/login), on /ws/{session_id}' } },
    },
  };
}
