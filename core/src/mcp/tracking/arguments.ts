import type { ChatModel, JsonSchema } from '@agent-host/sdk';
import { identifierArguments } from '../pipeline/gates.js';
import { normalizeIdentifier, parseIdentifiers, traceable, type Identifier } from './identifiers.js';
import { hasValue } from '../pipeline/policy.js';
import { askStructured } from '../../models/structured-output.js';
import { isTrackingTool, TRACKING_ARGUMENT } from './tracking.js';

/** How models and people name the tracking argument. */
const TRACKING_ALIASES = [
  'selectno',
  'select_no',
  'number',
  'no',
  'trackingnumber',
  'trackingno',
  'blno',
  'bl',
  'billno',
  'billoflading',
  'containerno',
  'containernumber',
  'container',
  'bookingno',
  'bookingnumber',
  'booking',
];

const squash = (name: string) => name.toLowerCase().replace(/[\s_.-]/g, '');

const propertiesOf = (schema: JsonSchema): Record<string, unknown> =>
  schema.properties && typeof schema.properties === 'object' ? (schema.properties as Record<string, unknown>) : {};

/** A schema the structured-output call can take: an object schema, whatever the server sent. */
const objectSchema = (schema: JsonSchema): JsonSchema => ({ ...schema, type: 'object', properties: propertiesOf(schema) });

export interface GeneratedArguments {
  skipped: boolean;
  reason: string;
  arguments: Record<string, unknown>;
  mode: string | null;
}

/**
 * `mcp-argument-generation`: the tool-call model gets the current message,
 * the tool's schema and the recent user messages, and answers the arguments
 * by structured output (JSON text as fallback). A required field it leaves
 * out stays out.
 */
export async function generateArguments(input: {
  toolName: string;
  description: string;
  schema: JsonSchema;
  message: string;
  userHistory: readonly string[];
  guidance: string | undefined;
  model: () => ChatModel;
  signal: AbortSignal;
}): Promise<GeneratedArguments> {
  const system = [
    `You prepare the arguments of the tool "${input.toolName}": ${input.description}`,
    `Its input schema: ${JSON.stringify(input.schema)}`,
    'Answer with one JSON object of arguments. Take every value from the user messages below; leave out any field they do not give. Never invent an identifier.',
    input.guidance ?? '',
  ].filter(Boolean);
  const history = input.userHistory.length ? `Recent user messages (oldest first):\n${input.userHistory.map((m) => `- ${m}`).join('\n')}\n\n` : '';
  const answer = await askStructured(
    input.model(),
    [
      { role: 'system', content: system.join('\n\n') },
      { role: 'user', content: `${history}Current message:\n${input.message}` },
    ],
    { name: 'tool_arguments', schema: objectSchema(input.schema) },
    input.signal,
  );
  return { skipped: false, reason: answer.error ?? 'generated', arguments: answer.value ?? {}, mode: answer.mode };
}

/** What `build_tool_arguments` did, for `mcp_context`. */
export interface BuiltArguments {
  arguments: Record<string, unknown>;
  canonicalized: { from: string; to: string }[];
  dropped: { field: string; reason: string }[];
  extracted: string[];
}

/** An argument value an identifier rule applies to: a string or number with at least four characters and a digit. */
const looksLikeIdentifier = (value: unknown) =>
  (typeof value === 'string' || typeof value === 'number') && /\d/.test(String(value)) && normalizeIdentifier(String(value)).length >= 4;

/**
 * `build_tool_arguments` (spec 4.13 row 4). Source A: the model's arguments,
 * keys canonicalised to the schema's names, identifier values kept only when
 * traceable to the current message or the allowed user history. Source B:
 * deterministic extraction from the current message only. Then `query` (the
 * user's message) and `round`.
 */
export function buildToolArguments(input: {
  toolName: string;
  schema: JsonSchema;
  generated: Record<string, unknown>;
  message: string;
  userHistory: readonly string[];
  messageIds: readonly Identifier[];
  round: number;
}): BuiltArguments {
  const properties = Object.keys(propertiesOf(input.schema));
  const tracking = isTrackingTool(input.toolName);
  const identifierFields = new Set(identifierArguments(input.toolName, input.schema));
  const out: BuiltArguments = { arguments: {}, canonicalized: [], dropped: [], extracted: [] };
  for (const [key, value] of Object.entries(input.generated)) {
    const name = canonicalName(key, properties, tracking);
    if (name === undefined) {
      out.dropped.push({ field: key, reason: 'not in the input schema' });
      continue;
    }
    if (name !== key) out.canonicalized.push({ from: key, to: name });
    if (!hasValue(value)) continue;
    if ((identifierFields.has(name) || looksLikeIdentifier(value)) && !traceable(String(value), [input.message, ...input.userHistory])) {
      out.dropped.push({ field: name, reason: "not traceable to the user's messages" });
      continue;
    }
    out.arguments[name] = value;
  }
  const extracted = extractFromMessage(input, properties, tracking, out.arguments);
  for (const [name, value] of Object.entries(extracted)) {
    out.arguments[name] = value;
    out.extracted.push(name);
  }
  out.arguments.query = input.message;
  out.arguments.round = input.round;
  return out;
}

/** The schema's name for a key: itself, the same name in another case or separator style, or (tracking) an alias of `selectNo`. */
function canonicalName(key: string, properties: readonly string[], tracking: boolean): string | undefined {
  if (properties.length === 0 || properties.includes(key)) return key;
  const match = properties.find((p) => squash(p) === squash(key));
  if (match) return match;
  return tracking && TRACKING_ALIASES.includes(squash(key)) ? TRACKING_ARGUMENT : undefined;
}

/**
 * Source B, from the current message only: the tracking identifier when the
 * message holds exactly one, or a bare identifier reply filling the one
 * required string field still empty.
 */
function extractFromMessage(
  input: { schema: JsonSchema; message: string; messageIds: readonly Identifier[] },
  properties: readonly string[],
  tracking: boolean,
  args: Record<string, unknown>,
): Record<string, unknown> {
  if (tracking) return input.messageIds.length === 1 ? { [TRACKING_ARGUMENT]: input.messageIds[0]!.value } : {};
  const ids = parseIdentifiers(input.message);
  const bare = ids.length === 1 && input.message.trim().split(/\s+/).length <= 3;
  const required = Array.isArray(input.schema.required) ? (input.schema.required as string[]) : [];
  const open = required.filter(
    (name) => properties.includes(name) && !hasValue(args[name]) && (propertiesOf(input.schema)[name] as { type?: unknown } | undefined)?.type === 'string',
  );
  return bare && open.length === 1 ? { [open[0]!]: ids[0]!.value } : {};
}
