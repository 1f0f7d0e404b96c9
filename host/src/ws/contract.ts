import { ERROR_CODES } from '@agent-host/sdk';
import { z } from 'zod';
import { timestamp } from '../validation.js';

/**
 * The payloads of the WebSocket interface (docs/websocket.md), as schemas: /asyncapi.json publishes them and the
 * WebSocket tests check every payload they receive against that document.
 */

/** A stored message, as `GET /sessions/{session_id}/messages` lists it. */
export const messageSchema = z
  .object({
    message_id: z.string().uuid(),
    session_id: z.string(),
    role: z.enum(['user', 'assistant', 'agent', 'system']),
    content: z.string(),
    message_type: z.string().nullable(),
    turn_id: z.string().uuid().nullable(),
    sender_id_snapshot: z.string().nullable(),
    sender_name_snapshot: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Message' });

/** A session's takeover state. */
export const sessionStateSchema = z.object({
  session_id: z.string(),
  agent_id: z.string().uuid().nullable(),
  status: z.enum(['AI_ACTIVE', 'HUMAN_ACTIVE']),
  human_takeover_enabled: z.boolean(),
  takeover_owner_id: z.string().nullable(),
  takeover_owner_name: z.string().nullable(),
  takeover_started_at: timestamp.nullable(),
  takeover_released_at: timestamp.nullable(),
  updated_at: timestamp.nullable(),
});

export const takeoverEventSchema = z
  .object({
    event_id: z.string().uuid(),
    session_id: z.string(),
    event_type: z.enum(['takeover', 'force_takeover', 'release', 'manual_message']),
    operator_id: z.string().nullable(),
    operator_name: z.string().nullable(),
    admin_user_id: z.string().uuid().nullable(),
    previous_owner_id: z.string().nullable(),
    message_id: z.string().uuid().nullable(),
    channel: z.enum(['rest', 'websocket']),
    created_at: timestamp,
  })
  .meta({ id: 'TakeoverEvent' });

export const approvalSchema = z.object({
  approval_id: z.string().uuid(),
  session_id: z.string(),
  turn_id: z.string().uuid().nullable(),
  agent_id: z.string().uuid().nullable(),
  mount_id: z.string().uuid().nullable(),
  mcp_server_id: z.string().uuid().nullable(),
  tool_name: z.string(),
  arguments: z.record(z.string(), z.unknown()),
  origin: z.string(),
  status: z.enum(['pending', 'approved', 'rejected', 'failed']),
  decided_by: z.string().nullable(),
  decided_at: timestamp.nullable(),
  result: z.unknown(),
  error_message: z.string().nullable(),
  result_message_id: z.string().uuid().nullable(),
  created_at: timestamp,
});

export const errorCode = z.enum(Object.keys(ERROR_CODES) as [string, ...string[]]);

/** What the server sends: each event name with its payload (every payload carries `type`, the event name). */
export const OUTBOUND_EVENTS = {
  history: {
    summary: 'The latest messages, at most 200, oldest first; once, on connect',
    payload: z.object({ type: z.literal('history'), session_id: z.string(), messages: z.array(messageSchema) }),
  },
  session: {
    summary: 'The session state: on connect, and after each takeover or release',
    payload: z.object({ type: z.literal('session') }).extend(sessionStateSchema.shape),
  },
  message: {
    summary: 'Each stored message: customer, AI reply, fixed response, human reply',
    payload: z.object({ type: z.literal('message'), session_id: z.string(), message: messageSchema }),
  },
  system: {
    summary: 'After each takeover or release, with the system message stored for it',
    payload: z.object({
      type: z.literal('system'),
      session_id: z.string(),
      status: z.enum(['AI_ACTIVE', 'HUMAN_ACTIVE']),
      event_type: z.string(),
      message: messageSchema,
    }),
  },
  takeover_event: {
    summary: 'After each takeover, release and human reply',
    payload: z.object({ type: z.literal('takeover_event'), session_id: z.string(), event: takeoverEventSchema }),
  },
  tool_approval: {
    summary: 'Administrator sockets only: a tool call held for an operator, and its decision',
    payload: z.object({ type: z.literal('tool_approval'), session_id: z.string(), approval: approvalSchema }),
  },
  handoff_requested: {
    summary: 'Administrator sockets only: a grounded agent could not answer and said a person will follow up (the session is not taken over)',
    payload: z.object({
      type: z.literal('handoff_requested'),
      session_id: z.string(),
      handoff: z.object({
        turn_id: z.string(),
        message_id: z.string().nullable(),
        reason: z.enum(['no_evidence', 'not_grounded']).nullable(),
        created_at: z.string(),
      }),
    }),
  },
  error: {
    summary: 'An inbound event was refused or failed; SESSION_REVOKED, PERMISSION_REVOKED and SESSION_NOT_PUBLIC close the socket right after',
    payload: z.object({ type: z.literal('error'), session_id: z.string().optional(), detail: z.string(), code: errorCode }),
  },
} as const;

const customerMessage = z.object({
  content: z.string().describe('The message; a leading [message_type=form|rule|other] line sets its type'),
  message_type: z.string().max(64).optional(),
  model_name: z.string().optional(),
  model_provider: z.string().optional(),
  model_temperature: z.number().optional(),
  time_zone: z.string().optional().describe("The caller's IANA time zone, kept on the session: scheduling in the chat reads times in it"),
});
const force = z.object({ force: z.boolean().optional().describe('Take over (or release) a session another operator owns') });

/** What a client sends (with an acknowledgement callback answering `{ok: true}` or `{ok: false, detail}`). */
export const INBOUND_PAYLOADS = {
  user_message: { summary: 'A customer message (the POST /stream pipeline), or an operator’s hand reply (only `content`)', payload: customerMessage },
  agent_takeover: { summary: 'An operator takes the session over: AI_ACTIVE → HUMAN_ACTIVE', payload: force },
  agent_release: { summary: 'An operator hands the session back: HUMAN_ACTIVE → AI_ACTIVE', payload: force },
  message: {
    summary: 'The generic form: `event` names one of the events above; an empty event with content is a user_message',
    payload: customerMessage
      .partial()
      .extend(force.shape)
      .extend({ event: z.string().max(64).optional() }),
  },
} as const;

/** The acknowledgement of every inbound event. */
export const acknowledgementSchema = z.union([z.object({ ok: z.literal(true) }), z.object({ ok: z.literal(false), detail: z.string() })]);
