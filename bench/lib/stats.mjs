// Statistics and number formatting shared by the benchmarks.

/** The nearest-rank percentile `p` (0-100) of an ascending array; null when empty. */
export const percentile = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] : null);

/** The median of any numbers (not sorted in place); null when empty. */
export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  if (!sorted.length) return null;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Count, p50, p99, max and mean of latencies in ms. */
export function latencySummary(values) {
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.length ? sorted[sorted.length - 1] : null,
    mean_ms: sorted.length ? sum / sorted.length : null,
  };
}

/** `a / b`, or null when either is missing or `b` is 0. */
export const ratio = (a, b) => (a === null || a === undefined || b === null || b === undefined || b === 0 ? null : a / b);

/** A number with thousands separators and `digits` decimals; `-` when missing. */
export const fmt = (n, digits = 1) =>
  n === null || n === undefined || Number.isNaN(n) ? '-' : n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** A Markdown table: a caption line, then the header and the rows (arrays of cells). */
export const markdownTable = (caption, header, rows) =>
  [caption, '', `| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((cells) => `| ${cells.join(' | ')} |`)].join('\n');
