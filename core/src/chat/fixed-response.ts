import type { MessageType } from '@agent-host/sdk';

interface TypeResponse {
  enabled?: boolean;
  response_text?: string;
  message_key_responses?: { message_key: string; response_text: string }[];
}

const normalize = (text: string) => text.trim().toLocaleLowerCase();

/**
 * Spec 4.2 rule 4: for the message's type, a `message_key_responses[]` entry
 * whose key equals the message (trimmed, case-insensitive) wins; otherwise
 * the type's default answers when it is enabled and has text.
 */
export function matchFixedResponse(config: Readonly<Record<string, unknown>> | null, messageType: MessageType, body: string): string | undefined {
  if (!config || messageType === 'user_chat') return undefined;
  const entry = config[messageType] as TypeResponse | undefined;
  if (!entry) return undefined;
  const keyed = entry.message_key_responses?.find((item) => normalize(item.message_key) === normalize(body));
  if (keyed) return keyed.response_text;
  return entry.enabled && entry.response_text?.trim() ? entry.response_text : undefined;
}

const KNOWN: readonly string[] = ['user_chat', 'form', 'rule', 'other'];

/** Unknown or missing `message_type` values: missing is `user_chat`, anything unknown is `other` (never a 422). */
export function normalizeMessageType(value: string | undefined): MessageType {
  if (value === undefined || value === '') return 'user_chat';
  return (KNOWN.includes(value) ? value : 'other') as MessageType;
}

/** Spec 4.2 rule 1: non-`user_chat` text reaches the agent as `[message_type=<type>] <message>`. */
export function agentText(messageType: MessageType, message: string): string {
  return messageType === 'user_chat' ? message : `[message_type=${messageType}] ${message}`;
}
