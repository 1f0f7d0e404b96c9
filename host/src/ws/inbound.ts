import { safeValidate } from '@agent-host/sdk';
import { z } from 'zod';

/** Inbound WebSocket events (spec 6.3); an empty `event` with non-empty `content` is a `user_message`. */
export const INBOUND_EVENTS = ['user_message', 'agent_takeover', 'agent_release'] as const;
export type InboundEventName = (typeof INBOUND_EVENTS)[number];

const inboundSchema = z
  .object({
    event: z.string().max(64).optional(),
    content: z.string().optional(),
    message_type: z.string().max(64).optional(),
    force: z.boolean().optional(),
    model_name: z.string().optional(),
    model_provider: z.string().optional(),
    model_temperature: z.number().optional(),
    time_zone: z.string().optional(),
  })
  .passthrough();

export type InboundPayload = z.output<typeof inboundSchema> & { event: InboundEventName };

/**
 * Reads one inbound event: socket.io's event name (`user_message`, ...) or
 * the generic `message` event whose payload carries `event`. Returns a
 * refusal text for anything else.
 */
export function readInbound(name: string, payload: unknown): InboundPayload | string {
  const parsed = safeValidate(inboundSchema, typeof payload === 'string' ? { content: payload } : (payload ?? {}));
  if (!parsed.success) return `malformed ${name} payload: ${parsed.issues.map((i) => `${i.loc.join('.') || 'payload'}: ${i.msg}`).join('; ')}`;
  const event = name === 'message' ? (parsed.data.event ?? '') : name;
  if (event === '' && parsed.data.content?.trim()) return { ...parsed.data, event: 'user_message' };
  if ((INBOUND_EVENTS as readonly string[]).includes(event)) return { ...parsed.data, event: event as InboundEventName };
  return `unknown event "${event}"; send one of ${INBOUND_EVENTS.join(', ')}`;
}

const TAG = /^\[message_type=(form|rule|other)\]\r?\n/;

/**
 * Content starting with `[message_type=form|rule|other]` and a newline
 * (spec 4.3 rule 3): the tag sets the message type and the body after it is
 * what fixed responses match.
 */
export function parseMessageTag(content: string): { message_type?: string; body: string } {
  const match = TAG.exec(content);
  return match ? { message_type: match[1], body: content.slice(match[0].length) } : { body: content };
}
