import { matchedText } from './linear-pattern.js';

/** One shipment identifier found in a text. `value` is normalised: upper case, no spaces or dashes, typos fixed. */
export interface Identifier {
  value: string;
  kind: 'select_no' | 'bill_of_lading' | 'booking' | 'container' | 'digits' | 'alphanumeric';
  /** Labelled (`BL ...`, `selectNo=...`) or shaped like a container number: a tracking signal on its own. */
  strong: boolean;
}

// Labels as people type them, common misspellings included.
const LABELS: [Identifier['kind'], string][] = [
  ['select_no', String.raw`sel(?:e|ec|ce|ect|cet)?t?[\s_-]?(?:no|num(?:ber)?)`],
  ['bill_of_lading', String.raw`b\s?\/\s?l|\bbl|bills?\s+of\s+lad(?:d)?ing|\bmbl|\bhbl|提单号?`],
  ['booking', String.raw`b(?:o{1,2}|oo)k?k?ing|bkg|订舱号?`],
  ['container', String.raw`cont(?:ai|ia|a)ner|cntr|柜号|箱号`],
];
// Between a label and its value: `no.`, `number`, `#`, `:`, `=`, `is`, with spaces around. Each repetition starts
// with a word or sign and owns the spaces after it, so a run of separators splits into repetitions one way only:
// matching stays linear (with spaces allowed on both sides of each, a message like `bl #  #  # ... !` took
// exponential time to fail).
const SEPARATOR = String.raw`\s*(?:(?:no\.?|num(?:ber)?|is|#|号|[:=：])\s*)*`;
const TOKEN = String.raw`([A-Za-z0-9][A-Za-z0-9-]{3,29})`;
const LABELLED = LABELS.map(([kind, label]) => ({ kind, pattern: new RegExp(`(?:${label})${SEPARATOR}${TOKEN}`, 'giu') }));
// ISO 6346: owner code, category U/J/Z, six digits, a check digit; spaces or dashes between the parts; O typed for 0.
const CONTAINER = /\b([A-Za-z]{3}[UJZujz])[\s-]?([0-9Oo]{6})[\s-]?([0-9Oo])\b/g;
const BARE = /\b[A-Za-z0-9][A-Za-z0-9-]{6,28}[A-Za-z0-9]\b/g;

/** `O`/`o` typed for 0 and `I`/`l` typed for 1 between digits. */
const fixDigitTypos = (token: string) => token.replace(/(?<=\d)[Oo](?=\d|$)|(?<=^|\d)[Oo](?=\d)/g, '0').replace(/(?<=\d)[Il](?=\d)/g, '1');

export const normalizeIdentifier = (text: string) => fixDigitTypos(text.replace(/[\s-]/g, '')).toUpperCase();

/** Digits, or letters and digits with enough digits to be a number rather than a word. */
function bareKind(token: string): Identifier['kind'] | undefined {
  const digits = (token.match(/\d/g) ?? []).length;
  if (/^\d+$/.test(token)) return token.length >= 8 && token.length <= 25 ? 'digits' : undefined;
  return digits >= 4 && token.length >= 8 && /[A-Z]/.test(token) ? 'alphanumeric' : undefined;
}

/**
 * Joins numbers typed in groups: digit groups split by one space or dash
 * (`1493-0283-9517`), and a carrier or container prefix split from its digits
 * (`EGLV 1493...`, `tghu 765432`).
 */
const joinGroups = (text: string) => text.replace(/(?<=\d)[ -](?=\d)/g, '').replace(/(?<=\b(?:[A-Za-z]{3}[UJZujz]|[A-Z]{4}))[ -](?=\d{3,})/g, '');

/**
 * Every distinct identifier in `text`, in order of appearance: labelled
 * forms (`selectNo=...`, BL, booking, container), ISO container numbers,
 * long digit strings and mixed alphanumerics, with common typos fixed.
 */
export function parseIdentifiers(input: string): Identifier[] {
  const text = joinGroups(matchedText(input));
  const found: (Identifier & { at: number })[] = [];
  const add = (at: number, id: Identifier) => {
    const same = found.find((f) => f.value === id.value);
    if (!same) found.push({ ...id, at });
    else if (id.strong && !same.strong) Object.assign(same, id, { at: same.at });
  };
  for (const { kind, pattern } of LABELLED) {
    for (const match of text.matchAll(pattern)) {
      const value = normalizeIdentifier(match[1]!);
      if (/\d/.test(value)) add(match.index, { value, kind, strong: true });
    }
  }
  for (const match of text.matchAll(CONTAINER))
    add(match.index, { value: normalizeIdentifier(match[1]! + match[2]! + match[3]!), kind: 'container', strong: true });
  for (const match of text.matchAll(BARE)) {
    const value = normalizeIdentifier(match[0]);
    const kind = bareKind(value);
    if (kind) add(match.index, { value, kind, strong: false });
  }
  return found.sort((a, b) => a.at - b.at).map(({ at: _at, ...id }) => id);
}

/** Whether `value` (an argument) can be traced to one of `texts`: it is, normalised, one of their identifiers or a part of their normalised text. */
export function traceable(value: string, texts: readonly string[]): boolean {
  const wanted = normalizeIdentifier(value);
  if (wanted.length === 0) return false;
  return texts.some((text) => parseIdentifiers(text).some((id) => id.value === wanted) || normalizeIdentifier(text).includes(wanted));
}
