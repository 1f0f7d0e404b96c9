import type { FieldLocation, FieldValue, RecognitionPage } from '@agent-host/sdk';

const normal = (text: string) => text.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

/** How a value may be written on the page: as given, and for a number also with two decimals and thousands separators. */
function spellings(value: string): string[] {
  const found = new Set([normal(value)]);
  const number = /^-?\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : NaN;
  if (Number.isFinite(number)) {
    for (const digits of [0, 2]) {
      if (digits === 0 && !Number.isInteger(number)) continue;
      found.add(number.toFixed(digits));
      found.add(number.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }));
    }
  }
  return [...found].filter((s) => s.length > 0);
}

/** The first page whose text holds the value (case, spacing and Unicode forms aside); null when none does. */
export function locateValues(values: FieldValue[], pages: RecognitionPage[]): FieldLocation[] {
  const texts = pages.map((page) => ({ page_number: page.page_number, text: normal(page.text) }));
  return values.map(({ field_id, value }) => {
    for (const spelling of spellings(value)) {
      const page = texts.find((p) => p.text.includes(spelling));
      if (page) return { field_id, page_number: page.page_number, matched_text: spelling };
    }
    return { field_id, page_number: null, matched_text: null };
  });
}
