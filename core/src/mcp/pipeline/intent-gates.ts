import type { IntentGateRule } from '../admin/agent-config.js';
import { linearPattern } from '../tracking/linear-pattern.js';
import { builtInTrackingIntent, matchesRule } from '../tracking/tracking.js';

/** `tool_capability` labels that mean the tracking capability; any other label is a custom capability. */
const TRACKING_CAPABILITIES = new Set(['tracking', 'query_tracking', 'query_tracking9']);

export const isTrackingCapability = (capability: string | null) => capability !== null && TRACKING_CAPABILITIES.has(capability);

const enabledFor = (rules: readonly IntentGateRule[], match: (capability: string) => boolean) => rules.filter((r) => r.enabled && match(r.tool_capability));

const ruleMatches = (rule: IntentGateRule, text: string) => matchesRule(text, { keywords: rule.keywords, patterns: rule.regex_patterns.map(linearPattern) });

/**
 * Whether a mount with a custom `tool_capability` takes part in this turn:
 * with enabled rules for its label, only when one matches the current user
 * message; without one, it is not blocked.
 */
export function customCapabilityAllows(capability: string | null, rules: readonly IntentGateRule[], message: string): boolean {
  if (capability === null || isTrackingCapability(capability)) return true;
  const own = enabledFor(rules, (c) => c === capability);
  return own.length === 0 || own.some((rule) => ruleMatches(rule, message));
}

/** The tracking matcher of the turn and whether elliptical follow-ups may reuse a history identifier. */
export interface TrackingIntent {
  matches(text: string): boolean;
  allowFollowUp: boolean;
  /** `built_in`, or the rule's `match_source_mode`. */
  source: string;
}

/**
 * Tracking without an enabled rule uses the built-in matcher. With one:
 * `default` keeps the built-in matcher, `append` adds the rule's keywords and
 * patterns to it, `replace` uses only the rule's.
 */
export function trackingIntent(rules: readonly IntentGateRule[]): TrackingIntent {
  const [rule] = enabledFor(rules, (c) => TRACKING_CAPABILITIES.has(c));
  if (!rule) return { matches: builtInTrackingIntent, allowFollowUp: true, source: 'built_in' };
  const own = (text: string) => ruleMatches(rule, text);
  const matches =
    rule.match_source_mode === 'replace'
      ? own
      : rule.match_source_mode === 'append'
        ? (text: string) => builtInTrackingIntent(text) || own(text)
        : builtInTrackingIntent;
  return { matches, allowFollowUp: rule.allow_contextual_follow_up, source: rule.match_source_mode };
}
