import { parseIdentifiers, type Identifier } from './identifiers.js';
import { matchedText, type LinearPattern } from './linear-pattern.js';

/** Tool names that are one capability: selection, allowlists, rules, raw passthrough keys and guidance treat them alike (spec 4.13). */
export const TRACKING_TOOLS = ['query_tracking', 'query_tracking9'] as const;
/** The identifier argument of the tracking tool. */
export const TRACKING_ARGUMENT = 'selectNo';

export const isTrackingTool = (name: string) => (TRACKING_TOOLS as readonly string[]).includes(name);

/** Tool names equal for matching: the same name, or both tracking tools. */
export const sameTool = (a: string, b: string) => a === b || (isTrackingTool(a) && isTrackingTool(b));

// The built-in tracking matcher: words that ask where a shipment is.
const TRACKING_INTENT = [
  /\b(?:track(?:ing)?|trace|shipments?|containers?|cargo|parcels?|consignments?|bills?\s+of\s+lading|b\/l|bookings?|vessel|eta|delivery\s+status|shipping\s+status)\b/i,
  /\bwhere(?:'s|\s+is|\s+are)\s+(?:my|our|the)\b/i,
  /查询|追踪|跟踪|物流|货柜|集装箱|提单|订舱|到哪/u,
];
// Short replies that lean on what was said before: "and now?", "any update?", "where is it".
const ELLIPTICAL = /\b(?:it|that|this|now|update|updates|status|again|still|latest|same|one)\b|呢|现在|最新/iu;

export interface IntentMatcher {
  keywords: readonly string[];
  patterns: readonly LinearPattern[];
}

/** True when `text` contains a keyword (case-insensitive) or matches a pattern. */
export function matchesRule(text: string, matcher: IntentMatcher): boolean {
  const lower = matchedText(text).toLowerCase();
  return matcher.keywords.some((k) => lower.includes(k.toLowerCase())) || matcher.patterns.some((p) => p.test(text));
}

export const builtInTrackingIntent = (text: string) => TRACKING_INTENT.some((p) => p.test(matchedText(text)));

export const isElliptical = (text: string) => text.trim().split(/\s+/).length <= 6 && ELLIPTICAL.test(text);

/** What the tracking capability reads from a message and the trusted (user) history. */
export interface TrackingSignals {
  intent: boolean;
  /** Identifiers of the current message that count: strong ones, and weak ones when intent or context backs them. */
  messageIds: Identifier[];
  /** Identifiers of the recent user messages, most recent first, distinct. */
  historyIds: Identifier[];
  /** Recent user history asked about tracking (intent or a strong identifier). */
  historyContext: boolean;
  /** A bare identifier, or a short elliptical reply, that continues tracking from history. */
  followUp: boolean;
}

/**
 * Reads the tracking signals of a turn. `intent` is the matcher to use (built
 * in, or an intent gate rule). Only user messages are given here: the
 * assistant's history is never a source of identifiers.
 */
export function trackingSignals(message: string, userHistory: readonly string[], intent: (text: string) => boolean): TrackingSignals {
  const messageIntent = intent(message);
  const historyContext = userHistory.some((text) => intent(text) || parseIdentifiers(text).some((id) => id.strong));
  const all = parseIdentifiers(message);
  const messageIds = all.filter((id) => id.strong || messageIntent || historyContext);
  const historyIds: Identifier[] = [];
  for (const text of [...userHistory].reverse()) {
    const backed = intent(text) || historyContext;
    for (const id of parseIdentifiers(text)) if ((id.strong || backed) && !historyIds.some((h) => h.value === id.value)) historyIds.push(id);
  }
  const bareReply = all.length === 1 && message.trim().split(/\s+/).length <= 3;
  const followUp = historyContext && ((bareReply && messageIds.length === 1) || (messageIds.length === 0 && (isElliptical(message) || messageIntent)));
  return { intent: messageIntent, messageIds, historyIds, historyContext, followUp };
}

const pick = (value: unknown, keys: readonly string[]) =>
  value && typeof value === 'object'
    ? Object.fromEntries(keys.filter((k) => k in (value as object)).map((k) => [k, (value as Record<string, unknown>)[k]]))
    : {};
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/**
 * The tracking result of spec 4.13: `tool`, `selectNo` (the number queried),
 * and `response` keeping only the listed fields; `curricon` comes from the
 * last `currList` event.
 */
export function projectTrackingResult(raw: unknown, toolName: string, selectNo: string): unknown {
  if (!raw || typeof raw !== 'object') return raw;
  const record = raw as Record<string, unknown>;
  const response = (record.response && typeof record.response === 'object' ? record.response : record) as Record<string, unknown>;
  return {
    tool: toolName,
    selectNo,
    response: {
      selectNo: response.selectNo ?? selectNo,
      tracking: list(response.tracking).map((tracking) => ({
        trackingSub: list((tracking as Record<string, unknown>)?.trackingSub).map((sub) => ({
          ...pick(sub, ['equipment', 'currentStatus', 'shipmentType']),
          containerNumberListMap: list((sub as Record<string, unknown>)?.containerNumberListMap).map((item) => {
            const events = list((item as Record<string, unknown>)?.currList).map((event) => pick(event, ['tile', 'time', 'des', 'addtype']));
            const last = list((item as Record<string, unknown>)?.currList).at(-1) as Record<string, unknown> | undefined;
            return {
              ...pick(item, ['currentNewStatus', 'currentTime', 'currentLocation']),
              curricon: last ? (last.curricon ?? last.addtype ?? null) : null,
              currList: events,
            };
          }),
        })),
      })),
    },
  };
}
