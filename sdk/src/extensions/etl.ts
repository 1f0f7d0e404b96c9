import type { ChatModel } from './models.js';

/** The types a target column may have. @public */
export const ETL_COLUMN_TYPES = ['string', 'integer', 'decimal', 'date', 'boolean', 'enum'] as const;

/** @public */
export type EtlColumnType = (typeof ETL_COLUMN_TYPES)[number];

/**
 * One column of an ETL job's target schema (one row of its target-schema CSV): the output has exactly these columns,
 * in this order. `allowed_values` is for `enum`; `format` is a hint for the source's values (a date's `dd/mm/yyyy`).
 * @public
 */
export interface EtlTargetColumn {
  name: string;
  type: EtlColumnType;
  required: boolean;
  description: string;
  allowed_values: string[];
  format: string | null;
}

/**
 * Where one target column's values come from: a source column (or none: the column stays empty) and how its text is
 * read (`conversion`: for dates the source's format, `dd/mm/yyyy`, `mm/dd/yyyy`, `yyyy-mm-dd`, `dd.mm.yyyy`;
 * `decimal_comma` for decimals written `1.234,50`; null: the type's default reading).
 * @public
 */
export interface EtlColumnMapping {
  target: string;
  source: string | null;
  conversion: string | null;
  /** Why, in a few words: shown in the job's report. */
  reason: string;
}

/** A job's mapping plan: one mapping per target column, in target order, and the source columns left out. @public */
export interface EtlPlan {
  mappings: EtlColumnMapping[];
  unmapped_source_columns: string[];
  /** `model` when a model proposed it, `deterministic` when matched by names and value types. */
  planned_by: 'model' | 'deterministic';
}

/** What planning sees of the source: its header and a bounded sample of rows, never the whole file. @public */
export interface EtlPlanInput {
  source_columns: string[];
  sample_rows: string[][];
  target: EtlTargetColumn[];
  instructions: string | null;
}

/** A cell the conversion could not take as it was: coerced (kept, changed) or rejected (emptied). @public */
export interface EtlCellIssue {
  column: string;
  kind: 'coerced' | 'rejected';
  reason: string;
}

/**
 * One converted row: a value per target column in order (`null` for empty; numbers for `integer` and `decimal`), the
 * cells' issues, and whether the row is rejected (a required column without a valid value): a rejected row is left
 * out of the output.
 * @public
 */
export interface EtlConvertedRow {
  values: (string | number | boolean | null)[];
  issues: EtlCellIssue[];
  rejected: boolean;
}

/** What a runtime gets from the host to plan a job. @public */
export interface EtlPlanContext {
  /** The agent's model (or the global model), for runtimes that plan with one. */
  model: ChatModel;
  signal: AbortSignal;
}

/**
 * Maps a source CSV onto a target schema, registered under a runtime name (`[etl] runtime_key`). The host owns the
 * files: it checks and stores them, reads the source as a stream, writes the output and the report, escapes formula
 * cells, reports progress and recovers stopped jobs. The runtime does the two steps in between: `plan` from the header
 * and a sample (once per job, kept with the job so a recovered job converts the same way), then `converter(plan)`
 * whose function turns each row (cells by source column index) into target values, deterministically.
 * `etlRuntimeConformance` in `@agent-host/sdk/testing` states the rules.
 * @public
 */
export interface EtlRuntime {
  plan(input: EtlPlanInput, context: EtlPlanContext): Promise<EtlPlan>;
  converter(plan: EtlPlan, input: Pick<EtlPlanInput, 'source_columns' | 'target'>): (row: string[]) => EtlConvertedRow;
}
