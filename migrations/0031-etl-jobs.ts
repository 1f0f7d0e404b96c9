import type { QueryInterface } from 'sequelize';

/**
 * ETL jobs (spec 2.9, 4.10): a source CSV and a target schema, stored in the object store, mapped by an ETL runtime
 * into an output CSV and a report. The column plan is kept once made, so a job recovered after its worker stopped
 * converts the same way; each attempt holds its own `lease_token`, and only its holder may end the job.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE TABLE etl_jobs (
    id uuid PRIMARY KEY,
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    channel varchar(16) NOT NULL,
    status varchar(24) NOT NULL,
    runtime_key varchar(120) NOT NULL,
    instructions text,
    model_binding jsonb NOT NULL,
    source_object_key varchar(1024) NOT NULL,
    source_filename varchar(500) NOT NULL,
    source_size_bytes bigint NOT NULL,
    source_columns jsonb NOT NULL,
    sample_rows jsonb NOT NULL,
    target_schema_object_key varchar(1024) NOT NULL,
    target_schema_filename varchar(500) NOT NULL,
    target_schema_size_bytes bigint NOT NULL,
    target_schema jsonb NOT NULL,
    plan jsonb,
    output_object_key varchar(1024),
    output_size_bytes bigint,
    report jsonb,
    rows_total integer NOT NULL,
    rows_done integer NOT NULL DEFAULT 0,
    error jsonb,
    generation_usage jsonb,
    attempt_count integer NOT NULL DEFAULT 0,
    lease_token uuid,
    lease_owner varchar(200),
    lease_expires_at timestamptz,
    last_attempt_started_at timestamptz,
    worker_heartbeat_at timestamptz,
    created_by uuid,
    public_caller_hash char(64),
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    completed_at timestamptz
  )`);
  await sql('CREATE INDEX etl_jobs_agent ON etl_jobs (agent_id, created_at DESC)');
  await sql('CREATE INDEX etl_jobs_caller ON etl_jobs (public_caller_hash, created_at DESC) WHERE public_caller_hash IS NOT NULL');
  await sql("CREATE INDEX etl_jobs_open ON etl_jobs (status) WHERE status IN ('queued', 'running', 'recovering')");
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE etl_jobs');
}
