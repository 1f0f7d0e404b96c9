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

function readDate(text: string, conversion: string | null): Read {
  const parts = text.split(/[/.\-\s]+/).map(Number);
  const iso = /^\d{4}-\d{1,2}-\d{1,2}$/.test(text);
  const layout = iso ? DATE_LAYOUTS['yyyy-mm-dd']! : (DATE_LAYOUTS[conversion ?? ''] ?? DATE_LAYOUTS['yyyy-mm-dd']!);
  if (parts.length !== 3 || parts.some((p) => !Number.isInteger(p))) return { rejected: `"${text}" is not a date` };
  const at = (key: 'd' | 'm' | 'y') => parts[layout.indexOf(key)]!;
  let year = at('y');
  if (year < 100) year += year < 70 ? 2000 : 1900;
  const date = new Date(Date.UTC(year, at('m') - 1, at('d')));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== at('m') - 1 || date.getUTCDate() !== at('d')) {
    return { rejected: `"${text}" is not a date in ${iso ? 'yyyy-mm-dd' : (conversion ?? 'yyyy-mm-dd')}` };
  }
  const value = `${pad(year, 4)}-${pad(at('m'))}-${pad(at('d'))}`;
  return value === text ? { value } : { value, coerced: `"${text}" read as ${iso ? 'yyyy-mm-dd' : conversion} and written ${value}` };
}

function readNumber(text: string, integer: boolean, conversion: string | null): Read {
  let cleaned = text.replace(/[\s$€£¥'_]/g, '');
  cleaned = conversion === 'decimal_comma' ? cleaned.replace(/\./g, '').replace(',', '.') : cleaned.replace(/,/g, '');
  if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(cleaned)) return { rejected: `"${text}" is not a number` };
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
