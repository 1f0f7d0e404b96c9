/**
 * A CSV cell safe to open in a spreadsheet: a text cell a spreadsheet would run as a formula (it starts with `=`,
 * `+`, `-`, `@`, a tab or a carriage return) gets a leading apostrophe, the OWASP escape; numbers are written as
 * numbers, so a negative number stays one. Every CSV the host writes (evaluation results, ETL output) goes through it.
 */
export function safeCell(value: unknown): string | number {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return value;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}
