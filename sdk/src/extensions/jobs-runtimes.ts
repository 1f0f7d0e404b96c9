/** Progress reporting and cancellation for long runs. @beta */
export interface RunContext {
  signal: AbortSignal;
  progress(done: number, total: number): Promise<void>;
}

/**
 * Runs an ETL job (CSV in, CSV out), registered under a runtime name.
 * @beta
 */
export interface EtlRuntime {
  run(
    input: { source_csv: string; target_schema_csv: string | null; instructions: string | null },
    context: RunContext,
  ): Promise<{ output_csv: string; summary: Record<string, unknown> }>;
}

/** One output of a Fusion run (`output_item_list[]`). @beta */
export interface FusionOutputItem {
  slot: string;
  kind: string;
  json_value: unknown;
}

/**
 * Executes a Fusion definition, registered under a runtime name.
 * @beta
 */
export interface FusionRuntime {
  execute(
    request: { definition: Readonly<Record<string, unknown>>; inputs: Readonly<Record<string, unknown>> },
    context: RunContext,
  ): Promise<{ output_item_list: FusionOutputItem[] }>;
}
