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
