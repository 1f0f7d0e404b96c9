import { ACCESS_COOKIE } from '../access/cookies.js';
import { acknowledgementSchema, INBOUND_PAYLOADS, OUTBOUND_EVENTS } from '../ws/contract.js';
import { DEMO_NAMESPACE, demoAiResponse, demoUserMessage } from '../ws/demo-gateway.js';
import { bodySchema } from './openapi-document.js';

type JsonObject = Record<string, unknown>;

const channel = (address: string, description: string, { outbound, inbound }: { outbound: string[]; inbound: string[] }): JsonObject => ({
  address,
  description,
  ...(address.includes('{session_id}') && {
    parameters: { session_id: { description: 'The chat session (a public session: the id POST /public/agents/{agent_id}/sessions or POST /stream issued)' } },
  }),
  bindings: { ws: { method: 'GET', bindingVersion: '0.1.0' } },
  messages: Object.fromEntries([...outbound, ...inbound.map((name) => `send_${name}`)].map((key) => [key, { $ref: `#/components/messages/${key}` }])),
});

/**
 * The AsyncAPI 3.0 description of the WebSocket interface: socket.io namespaces `/ws/{session_id}` (administrators)
 * and `/public/ws/{session_id}` (customers), and the demo gateway's `/demo`, the events each side sends, and their payloads.
 */
export function buildAsyncApiDocument(version: string): JsonObject {
  // Shared sub-schemas (Message, TakeoverEvent) are hoisted here, as in /openapi.json.
  const schemas: Parameters<typeof bodySchema>[1] = {};
  const payloadSchema = (schema: Parameters<typeof bodySchema>[0]) => bodySchema(schema, schemas, 'output');
  const messages: Record<string, JsonObject> = {};
  for (const [name, event] of Object.entries(OUTBOUND_EVENTS))
    messages[name] = { name, title: name, summary: event.summary, payload: payloadSchema(event.payload) };
  // Inbound messages are keyed `send_<event>`: the generic inbound `message` and the outbound `message` differ.
  for (const [name, event] of Object.entries(INBOUND_PAYLOADS))
    messages[`send_${name}`] = { name, title: name, summary: event.summary, payload: payloadSchema(event.payload) };
  messages.ai_response = {
    name: 'ai_response',
    title: 'ai_response',
    summary: 'Demo gateway: a fragment of the reply, an error, or done (always last, with the session to resume)',
    payload: payloadSchema(demoAiResponse),
  };
  messages.send_demo_user_message = {
    name: 'user_message',
    title: 'user_message (demo gateway)',
    summary: 'Demo gateway: one message of the conversation the socket holds (no acknowledgement: the answer is ai_response events)',
    payload: payloadSchema(demoUserMessage),
  };
  // What each namespace carries: customers get no tool approvals and take nothing over.
  const namespaces = {
    ws: { outbound: Object.keys(OUTBOUND_EVENTS), inbound: Object.keys(INBOUND_PAYLOADS) },
    publicWs: {
      outbound: Object.keys(OUTBOUND_EVENTS).filter((name) => name !== 'tool_approval' && name !== 'handoff_requested'),
      inbound: ['user_message', 'message'],
    },
    demo: { outbound: ['ai_response'], inbound: ['demo_user_message'] },
  };
  const operations: Record<string, JsonObject> = {};
  for (const [id, { outbound, inbound }] of Object.entries(namespaces)) {
    const refs = (keys: string[]) => keys.map((key) => ({ $ref: `#/channels/${id}/messages/${key}` }));
    operations[`${id}Receive`] = { action: 'send', channel: { $ref: `#/channels/${id}` }, summary: 'The server sends these events', messages: refs(outbound) };
    operations[`${id}Send`] = {
      action: 'receive',
      channel: { $ref: `#/channels/${id}` },
      summary: 'The server receives these events; each is acknowledged with {ok: true} or {ok: false, detail}',
      messages: refs(inbound.map((name) => `send_${name}`)),
      ...(id !== 'demo' && { reply: { messages: [{ $ref: '#/components/messages/acknowledgement' }] } }),
    };
  }
  messages.acknowledgement = {
    name: 'acknowledgement',
    title: 'acknowledgement',
    summary: 'The answer to an inbound event',
    payload: payloadSchema(acknowledgementSchema),
  };
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
      ws: channel(
        '/ws/{session_id}',
        'Administrators: the access cookie and conversations.read; role=operator (with conversations.write) takes over and replies',
        namespaces.ws,
      ),
      publicWs: channel('/public/ws/{session_id}', "Customers of a public_anonymous agent's server-issued sessions; no login", namespaces.publicWs),
      demo: channel(
        DEMO_NAMESPACE,
        'Demo only, may change (spec 6.4), and only with [demo_gateway] enabled: the query agent_id names a public_anonymous agent, session_id resumes a session it issued',
        namespaces.demo,
      ),
    },
    operations,
    components: {
      schemas,
      messages,
      securitySchemes: {
        [ACCESS_COOKIE]: {
          type: 'httpApiKey',
          in: 'cookie',
          name: ACCESS_COOKIE,
          description: 'The administrator access cookie (POST /admin/auth/login), on /ws/{session_id}',
        },
      },
    },
  };
}
