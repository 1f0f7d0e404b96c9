import type { JsonSchema, MessageType, ToolGuidance } from '@agent-host/sdk';
import { parseIdentifiers, type Identifier } from '../tracking/identifiers.js';
import { hasValue } from './policy.js';
import { isTrackingTool, TRACKING_ARGUMENT, type TrackingSignals } from '../tracking/tracking.js';

/** A gate's verdict. `blocked` stops with guidance; `skipped` stops silently. */
export type GateVerdict =
  | { should_attempt: true; reason: string; identifier_source: 'current_message' | 'history_follow_up' | null }
  | { should_attempt: false; outcome: 'blocked'; reason: string; guidance: ToolGuidance }
  | { should_attempt: false; outcome: 'skipped'; reason: string };

/** The AI selector's answer (spec 4.13), reused by the pre-generation gate. */
export interface SelectorDecision {
  selected_tool_name: string | null;
  should_call_now: boolean;
  missing_required_arguments: string[];
  reason: string;
}

const IDENTIFIER_NAMES = [/(?:^|[_-])(?:id|no|num|number|code)$/i, /[a-z](?:Id|No|Num|Number|Code)$/, /selectno|^bl|booking|container|order|tracking/i];

/** Arguments that can carry an identifier: the tracking argument, or names that say so (`order_id`, `bookingNo`). */
export function identifierArguments(toolName: string, schema: JsonSchema): string[] {
  if (isTrackingTool(toolName)) return [TRACKING_ARGUMENT];
  const properties = schema.properties && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
  return properties.filter((name) => IDENTIFIER_NAMES.some((pattern) => pattern.test(name)));
}

export function missingGuidance(toolName: string, schema: JsonSchema, missing: readonly string[]): ToolGuidance {
  const tracking = isTrackingTool(toolName);
  return {
    kind: 'missing_arguments',
    tool_name: toolName,
    missing_identifiers: [...missing],
    candidate_identifier_arguments: [...new Set([...identifierArguments(toolName, schema), ...missing])],
    candidate_identifiers: [],
    message: tracking
      ? 'To look up the shipment, ask the user for one bill of lading, container or booking number.'
      : `To use ${toolName}, ask the user for: ${missing.join(', ')}.`,
  };
}

export function ambiguityGuidance(toolName: string, schema: JsonSchema, candidates: readonly Identifier[]): ToolGuidance {
  const values = candidates.map((c) => c.value);
  return {
    kind: 'ambiguous_identifier',
    tool_name: toolName,
    missing_identifiers: isTrackingTool(toolName) ? [TRACKING_ARGUMENT] : [],
    candidate_identifier_arguments: identifierArguments(toolName, schema),
    candidate_identifiers: values,
    message: `Several numbers were mentioned (${values.join(', ')}); ask the user which one to look up.`,
  };
}

/**
 * `mcp-pre-generation-gate`: whether argument generation is worthwhile.
 * History identifiers only decide that; they are never copied into arguments.
 */
export function preGenerationGate(input: {
  toolName: string;
  schema: JsonSchema;
  messageType: MessageType;
  message: string;
  tracking: TrackingSignals | null;
  allowFollowUp: boolean;
  decision: SelectorDecision | null;
}): GateVerdict {
  const { toolName, schema, tracking } = input;
  if (tracking) {
    const explicit = tracking.messageIds;
    if (input.messageType !== 'user_chat' && explicit.length === 0)
      return { should_attempt: false, outcome: 'skipped', reason: `message_type ${input.messageType} without an explicit identifier` };
    if (explicit.length === 1) return { should_attempt: true, reason: 'unambiguous identifier in the current message', identifier_source: 'current_message' };
    if (explicit.length > 1)
      return {
        should_attempt: false,
        outcome: 'blocked',
        reason: 'several identifiers in the current message',
        guidance: ambiguityGuidance(toolName, schema, explicit),
      };
    const followUp = input.allowFollowUp && (tracking.followUp || tracking.intent);
    if (followUp && tracking.historyIds.length === 1)
      return { should_attempt: true, reason: 'follow-up to a unique identifier in recent user history', identifier_source: 'history_follow_up' };
    if (followUp && tracking.historyIds.length > 1)
      return {
        should_attempt: false,
        outcome: 'blocked',
        reason: 'several competing identifiers in recent user history',
        guidance: ambiguityGuidance(toolName, schema, tracking.historyIds),
      };
    if (tracking.intent || tracking.followUp)
      return {
        should_attempt: false,
        outcome: 'blocked',
        reason: 'tracking intent without an identifier',
        guidance: missingGuidance(toolName, schema, [TRACKING_ARGUMENT]),
      };
    return { should_attempt: false, outcome: 'skipped', reason: 'no tracking content in the message' };
  }
  if (input.messageType !== 'user_chat' && parseIdentifiers(input.message).length === 0) {
    return { should_attempt: false, outcome: 'skipped', reason: `message_type ${input.messageType} without an explicit identifier` };
  }
  const decision = input.decision;
  if (!decision || decision.should_call_now)
    return { should_attempt: true, reason: decision ? `selector: ${decision.reason || 'call now'}` : 'selected', identifier_source: null };
  if (decision.missing_required_arguments.length) {
    return {
      should_attempt: false,
      outcome: 'blocked',
      reason: `selector: missing ${decision.missing_required_arguments.join(', ')}`,
      guidance: missingGuidance(toolName, schema, decision.missing_required_arguments),
    };
  }
  return { should_attempt: false, outcome: 'skipped', reason: `selector: ${decision.reason || 'not now'}` };
}

/** `mcp-tool-attempt-gate`: the tracking tool goes ahead only with one traceable identifier in its arguments. */
export function attemptGate(toolName: string, schema: JsonSchema, args: Record<string, unknown>): GateVerdict {
  if (!isTrackingTool(toolName))
    return { should_attempt: true, reason: 'identifier arguments are traceable (untraceable ones were dropped)', identifier_source: null };
  const value = args[TRACKING_ARGUMENT];
  if (!hasValue(value))
    return { should_attempt: false, outcome: 'blocked', reason: 'no traceable identifier', guidance: missingGuidance(toolName, schema, [TRACKING_ARGUMENT]) };
  const ids = parseIdentifiers(String(value));
  if (ids.length > 1)
    return {
      should_attempt: false,
      outcome: 'blocked',
      reason: 'the identifier argument holds several identifiers',
      guidance: ambiguityGuidance(toolName, schema, ids),
    };
  return { should_attempt: true, reason: 'identifier traceable to the user', identifier_source: null };
}
