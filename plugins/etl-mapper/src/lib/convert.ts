import type { EtlCellIssue, EtlColumnMapping, EtlConvertedRow, EtlTargetColumn } from '@agent-host/sdk';

type Value = string | number | boolean | null;
type Read = { value: Value; coerced?: string } | { rejected: string };

/** The date layouts a mapping's `conversion` may name, each as the order of its day, month and year. */
export const DATE_LAYOUTS: Record<string, ('d' | 'm' | 'y')[]> = {
  'dd/mm/yyyy': ['d', 'm', 'y'],
  'mm/dd/yyyy': ['m', 'd', 'y'],
  'yyyy-mm-dd': ['y', 'm', 'd'],
  'dd.mm.yyyy': ['d', 'm', 'y'],
  'dd-mm-yyyy': ['d', 'm', 'y'],
};
export const CONVERSIONS = [...Object.keys(DATE_LAYOUTS), 'decimal_comma'];

const TRUE = new Set(['true', 'yes', 'y', '1', 't', 'on']);
const FALSE = new Set(['false', 'no', 'n', '0', 'f', 'off']);
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** Where each of day, month and year stands in a layout. */
const POSITIONS = Object.fromEntries(
  Object.entries(DATE_LAYOUTS).map(([name, order]) => [name, { d: order.indexOf('d'), m: order.indexOf('m'), y: order.indexOf('y') }]),
);
const SEPARATORS = /[/.\-\s]+/;
// Three digit groups between separators: the common case, read without splitting.
const THREE_NUMBERS = /^(\d+)[/.\-\s]+(\d+)[/.\-\s]+(\d+)$/;
const ISO = /^\d{4}-\d{1,2}-\d{1,2}$/;
const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (year: number) => year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
/** Whether the day exists in the Gregorian calendar, with a year of four digits at most (yyyy-mm-dd has room for no more). */
const isDay = (year: number, month: number, day: number) =>
  year <= 9999 && month >= 1 && month <= 12 && day >= 1 && day <= (month === 2 && leap(year) ? 29 : DAYS[month - 1]!);

function readDate(text: string, conversion: string | null): Read {
  const matched = THREE_NUMBERS.exec(text);
  const parts = matched ? [Number(matched[1]), Number(matched[2]), Number(matched[3])] : text.split(SEPARATORS).map(Number);
  const iso = ISO.test(text);
  const layout = !iso && conversion !== null && Object.hasOwn(POSITIONS, conversion) ? conversion : 'yyyy-mm-dd';
  if (parts.length !== 3 || parts.some((p) => !Number.isInteger(p))) return { rejected: `"${text}" is not a date` };
  const at = POSITIONS[layout]!;
  let year = parts[at.y]!;
  const month = parts[at.m]!;
  const day = parts[at.d]!;
  if (year < 100) year += year < 70 ? 2000 : 1900;
  if (!isDay(year, month, day)) {
    return { rejected: `"${text}" is not a date in ${iso ? 'yyyy-mm-dd' : (conversion ?? 'yyyy-mm-dd')}` };
  }
  const value = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
  return value === text ? { value } : { value, coerced: `"${text}" read as ${iso ? 'yyyy-mm-dd' : conversion} and written ${value}` };
}

const PLAIN_NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;

function readNumber(text: string, integer: boolean, conversion: string | null): Read {
  // A plain number, the usual cell, is taken as it is. Otherwise currency signs, spaces and digit group marks go;
  // with decimal_comma the comma is the decimal point.
  const plain = conversion !== 'decimal_comma' && PLAIN_NUMBER.test(text);
  const cleaned = plain ? text : conversion === 'decimal_comma' ? text.replace(/[\s$€£¥'_.]/g, '').replace(',', '.') : text.replace(/[\s$€£¥'_,]/g, '');
  if (!plain && !PLAIN_NUMBER.test(cleaned)) return { rejected: `"${text}" is not a number` };
  const number = Number(cleaned);
  if (integer && !Number.isInteger(number)) return { rejected: `"${text}" is not a whole number` };
  return cleaned === text ? { value: number } : { value: number, coerced: `"${text}" read as ${number}` };
}

function read(column: EtlTargetColumn, mapping: EtlColumnMapping, text: string): Read {
  switch (column.type) {
    case 'string':
      return { value: text };
    case 'integer':
    case 'decimal':
      return readNumber(text, column.type === 'integer', mapping.conversion);
    case 'date':
      return readDate(text, mapping.conversion);
    case 'boolean': {
      const word = text.toLowerCase();
      if (TRUE.has(word)) return word === 'true' ? { value: true } : { value: true, coerced: `"${text}" read as true` };
      if (FALSE.has(word)) return word === 'false' ? { value: false } : { value: false, coerced: `"${text}" read as false` };
      return { rejected: `"${text}" is not a yes/no value` };
    }
    case 'enum': {
      const found = column.allowed_values.find((v) => v.toLowerCase() === text.toLowerCase());
      if (found === undefined) return { rejected: `"${text}" is not one of ${column.allowed_values.join(', ')}` };
      return found === text ? { value: found } : { value: found, coerced: `"${text}" read as "${found}"` };
    }
  }
}

/**
 * The row function of a plan: each target column's value from its source cell (trimmed; empty is null), read as the
 * column's type. A cell that does not read is emptied and reported; a required column left empty rejects the row.
 */
export function rowConverter(mappings: EtlColumnMapping[], sourceColumns: string[], target: EtlTargetColumn[]): (row: string[]) => EtlConvertedRow {
  const columns = target.map((column) => {
    const mapping = mappings.find((m) => m.target === column.name) ?? { target: column.name, source: null, conversion: null, reason: '' };
    return { column, mapping, index: mapping.source === null ? -1 : sourceColumns.indexOf(mapping.source) };
  });
  return (row) => {
    const issues: EtlCellIssue[] = [];
    let rejected = false;
    const values = columns.map(({ column, mapping, index }): Value => {
      const text = index < 0 ? '' : (row[index] ?? '').trim();
      let value: Value = null;
      if (text !== '') {
        const outcome = read(column, mapping, text);
        if ('rejected' in outcome) issues.push({ column: column.name, kind: 'rejected', reason: outcome.rejected });
        else {
          value = outcome.value;
          if (outcome.coerced) issues.push({ column: column.name, kind: 'coerced', reason: outcome.coerced });
        }
      }
      if (value === null && column.required) {
        rejected = true;
        if (text === '') issues.push({ column: column.name, kind: 'rejected', reason: 'a required value is missing' });
      }
      return value;
    });
    return { values, issues, rejected };
  };
}
