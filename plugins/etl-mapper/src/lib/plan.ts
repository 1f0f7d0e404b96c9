import type { EtlColumnMapping, EtlPlan, EtlPlanInput, EtlTargetColumn } from '@agent-host/sdk';
import { CONVERSIONS, DATE_LAYOUTS } from './convert.js';

// Words that name the same thing in column headers.
const SYNONYMS: string[][] = [
  ['email', 'mail', 'emailaddress', 'e mail'],
  ['phone', 'telephone', 'tel', 'mobile', 'cell'],
  ['name', 'fullname', 'customername', 'contactname'],
  ['date', 'day', 'dt', 'on'],
  ['amount', 'total', 'sum', 'price', 'value'],
  ['zip', 'postcode', 'postalcode', 'zipcode'],
  ['country', 'nation'],
  ['id', 'identifier', 'number', 'no', 'nr'],
];
const MIN_SCORE = 0.3;

/** A header's words (lower case, no punctuation, its parenthesised hint left out) and that hint. */
function words(header: string): { words: string[]; hint: string | null } {
  const hint = /\(([^)]*)\)/.exec(header)?.[1]?.trim().toLowerCase() ?? null;
  const split = header
    .replace(/\([^)]*\)/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .replace(/e-mail/g, 'email')
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
  return { words: split, hint };
}

const canonical = (word: string) => SYNONYMS.find((group) => group.includes(word))?.[0] ?? word;

/** How well a source header names a target column, 0 to 1: the same name, or the share of (synonym) words they share. */
function nameScore(source: string, target: string): number {
  const s = words(source).words;
  const t = words(target).words;
  if (s.join('') === t.join('')) return 1;
  const sc = new Set(s.map(canonical));
  const tc = new Set(t.map(canonical));
  if ([...sc].join() === [...tc].join()) return 0.95;
  const shared = [...tc].filter((w) => sc.has(w)).length;
  return shared / new Set([...sc, ...tc]).size;
}

const DATE_LIKE = /^\s*\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}\s*$/;
const NUMBER_LIKE = /^\s*[+-]?[$€£¥]?\s*[\d.,' ]+\s*$/;

/** How well a column's sample values fit the target's type: -0.3 (they do not) to 0.2 (they do). */
function typeScore(values: string[], column: EtlTargetColumn): number {
  const present = values.filter((v) => v.trim() !== '');
  if (!present.length) return 0;
  const share = (test: (v: string) => boolean) => present.filter(test).length / present.length;
  switch (column.type) {
    case 'date':
      return share((v) => DATE_LIKE.test(v)) > 0.8 ? 0.2 : -0.3;
    case 'integer':
    case 'decimal':
      return share((v) => NUMBER_LIKE.test(v)) > 0.8 ? 0.2 : -0.3;
    case 'enum':
      return share((v) => column.allowed_values.some((a) => a.toLowerCase() === v.trim().toLowerCase())) > 0.5 ? 0.2 : 0;
    default:
      return 0;
  }
}

/** The reading of a matched column: a date layout from the header's hint or the values, a decimal comma from the values. */
function conversionFor(header: string, values: string[], column: EtlTargetColumn): string | null {
  if (column.type === 'date') {
    const hint = words(header).hint ?? column.format?.toLowerCase() ?? null;
    if (hint && hint in DATE_LAYOUTS) return hint;
    const parts = values.filter((v) => DATE_LIKE.test(v)).map((v) => v.trim().split(/[/.-]/).map(Number));
    if (parts.some((p) => p[0]! > 31)) return 'yyyy-mm-dd';
    if (parts.some((p) => p[1]! > 12)) return 'mm/dd/yyyy';
    return 'dd/mm/yyyy';
  }
  if (column.type === 'decimal' && values.some((v) => /\d,\d{1,2}$/.test(v.trim()))) return 'decimal_comma';
  return null;
}

/** The plan by names and value types: each target column takes the best-scoring unused source column, best pairs first. */
export function deterministicPlan(input: EtlPlanInput, why = 'matched by names and value types'): EtlPlan {
  const values = (index: number) => input.sample_rows.map((row) => row[index] ?? '');
  const pairs = input.target.flatMap((column, t) =>
    input.source_columns.map((header, s) => ({ t, s, score: nameScore(header, column.name) + typeScore(values(s), column) })),
  );
  pairs.sort((a, b) => b.score - a.score || a.t - b.t || a.s - b.s);
  const chosen = new Map<number, { s: number; score: number }>();
  const used = new Set<number>();
  for (const pair of pairs) {
    if (pair.score < MIN_SCORE || chosen.has(pair.t) || used.has(pair.s)) continue;
    chosen.set(pair.t, pair);
    used.add(pair.s);
  }
  const mappings: EtlColumnMapping[] = input.target.map((column, t) => {
    const pick = chosen.get(t);
    if (!pick) return { target: column.name, source: null, conversion: null, reason: 'no source column matches' };
    const header = input.source_columns[pick.s]!;
    return {
      target: column.name,
      source: header,
      conversion: conversionFor(header, values(pick.s), column),
      reason: `${why} (score ${pick.score.toFixed(2)})`,
    };
  });
  return { mappings, unmapped_source_columns: input.source_columns.filter((_, s) => !used.has(s)), planned_by: 'deterministic' };
}

/** The JSON Schema the model answers its plan in. */
export const PLAN_SCHEMA = {
  name: 'etl_column_plan',
  schema: {
    type: 'object',
    required: ['mappings'],
    additionalProperties: false,
    properties: {
      mappings: {
        type: 'array',
        items: {
          type: 'object',
          required: ['target', 'source', 'conversion', 'reason'],
          additionalProperties: false,
          properties: {
            target: { type: 'string' },
            source: { type: ['string', 'null'] },
            conversion: { type: ['string', 'null'], enum: [...CONVERSIONS, null] },
            reason: { type: 'string' },
          },
        },
      },
    },
  },
};

/**
 * The model's answer as a plan, or why it is not one. Each target column must be mapped once, to a source column of
 * the header (or none), with a known conversion; a column the model left out is matched deterministically.
 */
export function modelPlan(answer: string, input: EtlPlanInput): EtlPlan | string {
  let parsed: { mappings?: unknown };
  try {
    parsed = JSON.parse(answer) as { mappings?: unknown };
  } catch {
    return 'the answer was not JSON';
  }
  if (!Array.isArray(parsed.mappings)) return 'the answer has no mappings';
  const fallback = deterministicPlan(input, 'left out by the model; matched by names and value types');
  const used = new Set<string>();
  const mappings: EtlColumnMapping[] = [];
  for (const column of input.target) {
    const proposed = (parsed.mappings as Record<string, unknown>[]).find((m) => m?.target === column.name);
    const source = typeof proposed?.source === 'string' ? proposed.source : null;
    const conversion = typeof proposed?.conversion === 'string' && CONVERSIONS.includes(proposed.conversion) ? proposed.conversion : null;
    if (!proposed || (source !== null && (!input.source_columns.includes(source) || used.has(source)))) {
      const own = fallback.mappings.find((m) => m.target === column.name)!;
      if (own.source && used.has(own.source)) mappings.push({ target: column.name, source: null, conversion: null, reason: 'no free source column matches' });
      else mappings.push(own);
    } else mappings.push({ target: column.name, source, conversion, reason: String(proposed.reason ?? 'proposed by the model') });
    const last = mappings.at(-1)!;
    if (last.source) used.add(last.source);
  }
  return { mappings, unmapped_source_columns: input.source_columns.filter((c) => !used.has(c)), planned_by: 'model' };
}
