import { ETL_COLUMN_TYPES, ValidationError, type EtlColumnType, type EtlTargetColumn, type ValidationIssue } from '@agent-host/sdk';
import { parse } from 'csv-parse/sync';

/** The header of a target-schema CSV: `name` and `type` are required, the rest optional (docs/api-decisions.md). */
export const SCHEMA_COLUMNS = ['name', 'type', 'required', 'description', 'allowed_values', 'format'] as const;
const TRUE = new Set(['true', 'yes', 'y', '1']);
const FALSE = new Set(['false', 'no', 'n', '0', '']);

/**
 * A target-schema CSV (UTF-8, one row per target column, in output order) as columns. Every problem is a 422 naming
 * the row (`loc: ["body", "target_schema_csv", <row>, <column>]`, rows counted from 1 after the header): an unknown
 * header, a missing or repeated name, an unknown type, a `required` that is not yes or no, an enum without allowed
 * values.
 */
export function readTargetSchema(bytes: Uint8Array, maxColumns: number): EtlTargetColumn[] {
  const refuse = (issues: ValidationIssue[]): never => {
    throw new ValidationError(issues);
  };
  const at = (row: number | null, column: string | null, msg: string): ValidationIssue => ({
    loc: ['body', 'target_schema_csv', ...(row === null ? [] : [row]), ...(column === null ? [] : [column])],
    msg,
    type: 'value_error',
  });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return refuse([at(null, null, 'is not UTF-8 text; save it as CSV UTF-8')]);
  }
  let records: Record<string, string>[];
  try {
    records = parse(text, { bom: true, columns: (header: string[]) => header.map((h) => h.trim().toLowerCase()), skip_empty_lines: true, trim: true });
  } catch (error) {
    const line = (error as { lines?: number }).lines;
    return refuse([at(line === undefined ? null : Math.max(1, line - 1), null, `is not a CSV: ${(error as Error).message}`)]);
  }
  const header = text.length ? Object.keys(records[0] ?? {}) : [];
  const unknown = header.filter((h) => !(SCHEMA_COLUMNS as readonly string[]).includes(h));
  if (unknown.length) refuse([at(null, null, `unknown header ${unknown.map((u) => `"${u}"`).join(', ')}; the header is ${SCHEMA_COLUMNS.join(', ')}`)]);
  if (!records.length) refuse([at(null, null, `has no rows: one row per target column, with at least ${SCHEMA_COLUMNS.slice(0, 2).join(' and ')}`)]);
  if (records.length > maxColumns) refuse([at(null, null, `has ${records.length} rows; at most ${maxColumns} target columns ([etl] max_schema_columns)`)]);
  const issues: ValidationIssue[] = [];
  const seen = new Map<string, number>();
  const columns = records.map((record, index): EtlTargetColumn => {
    const row = index + 1;
    const name = record.name ?? '';
    const type = (record.type ?? '').toLowerCase();
    if (!name) issues.push(at(row, 'name', 'a target column needs a name'));
    else if (seen.has(name)) issues.push(at(row, 'name', `"${name}" repeats row ${seen.get(name)}`));
    else seen.set(name, row);
    if (!(ETL_COLUMN_TYPES as readonly string[]).includes(type))
      issues.push(at(row, 'type', `"${record.type ?? ''}" is not one of ${ETL_COLUMN_TYPES.join(', ')}`));
    const required = (record.required ?? '').toLowerCase();
    if (!TRUE.has(required) && !FALSE.has(required)) issues.push(at(row, 'required', `"${record.required}" is not yes or no`));
    const allowed = (record.allowed_values ?? '')
      .split('|')
      .map((v) => v.trim())
      .filter(Boolean);
    if (type === 'enum' && !allowed.length) issues.push(at(row, 'allowed_values', 'an enum needs its allowed values, separated by |'));
    return {
      name,
      type: type as EtlColumnType,
      required: TRUE.has(required),
      description: record.description ?? '',
      allowed_values: allowed,
      format: record.format || null,
    };
  });
  if (issues.length) refuse(issues);
  return columns;
}
