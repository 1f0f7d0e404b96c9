import { isDeepStrictEqual } from 'node:util';
import type { RuleScore } from './rule-score.js';
import { normalizeAnswer } from './rule-score.js';

/** How one extracted field compares with its reviewed value. */
export interface FieldScore {
  field_id: string;
  expected: unknown;
  predicted: unknown;
  exact_match: boolean;
  normalized_match: boolean;
}

// An amount as documents write it: an optional currency word or sign, digits with separators, an optional currency after.
const AMOUNT = /^[^\d\s-]{0,4}\s*(-?[\d\s.,]*\d)\s*[^\d\s]{0,4}$/u;

/** A number written as `1,250.00`, `1250` or `EUR 1 250.00`; null for anything else. */
function amountOf(text: string): number | null {
  const digits = AMOUNT.exec(text.trim())?.[1]?.replace(/[\s,]/g, '');
  if (digits === undefined || !/^-?\d*\.?\d+$/.test(digits)) return null;
  return Number(digits);
}

/** A value for the normalized comparison: numbers (and amounts written as text) by value, text as SQuAD-normalised words. */
function normalized(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return `#${value}`;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const amount = amountOf(text);
  return amount === null ? normalizeAnswer(text).join(' ') : `#${amount}`;
}

/**
 * Field-by-field scores of an extraction against reviewed values: `exact_match` when the values are equal as JSON,
 * `normalized_match` when they are equal after normalising (case, spacing, punctuation; amounts by value). The rule
 * score reads them as shares of fields, listed in `order`: `exact_match` and `token_f1` are the shares that match exactly and
 * normalised, and `pass_rate` is 1 when every field matches normalised.
 */
export function fieldScores(
  expected: Record<string, unknown>,
  predicted: Record<string, unknown>,
  order: readonly string[],
): { fields: FieldScore[]; rule: RuleScore } {
  // Expected values come back from JSONB, which keeps no key order: the fields are listed in `order` (the schema's).
  const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
  const ids = Object.keys(expected).sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
  const fields = ids.map((field_id) => {
    const want = expected[field_id];
    const got = predicted[field_id] ?? null;
    return { field_id, expected: want, predicted: got, exact_match: isDeepStrictEqual(want, got), normalized_match: normalized(want) === normalized(got) };
  });
  const share = (hits: number) => (fields.length ? Math.round((hits / fields.length) * 10_000) / 10_000 : 1);
  const normalizedHits = fields.filter((f) => f.normalized_match).length;
  return {
    fields,
    rule: {
      exact_match: share(fields.filter((f) => f.exact_match).length),
      token_f1: share(normalizedHits),
      pass_rate: normalizedHits === fields.length ? 1 : 0,
      matched_expected_answer_index: null,
    },
  };
}
