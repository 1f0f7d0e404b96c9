import type { QueryInterface } from 'sequelize';

/**
 * Document recognition (spec 2.9, 4.10): Fusion agents registered as runtime agents, and runs that bind an uploaded
 * document to a runtime agent's published version. A run keeps its source document, PDF rendition, page previews and
 * result JSON in the object store, and one row per extracted field with the field's current review state. Runs have
 * no foreign key to agents: removing or deleting the agent keeps the reviewed runs, which carry their own snapshots.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE TABLE document_recognition_runtime_agents (
    agent_id uuid PRIMARY KEY REFERENCES agents (id) ON DELETE CASCADE,
    registered_by uuid,
    registered_at timestamptz NOT NULL
  )`);
  await sql(`CREATE TABLE document_recognition_runs (
    id uuid PRIMARY KEY,
    runtime_agent_id uuid NOT NULL,
    runtime_agent_version_id uuid NOT NULL,
    runtime_agent_type_snapshot varchar(32) NOT NULL,
    runtime_binding_snapshot jsonb NOT NULL,
    status varchar(24) NOT NULL,
    source_object_key varchar(1024) NOT NULL,
    source_filename varchar(500) NOT NULL,
    source_content_type varchar(200) NOT NULL,
    source_size_bytes bigint NOT NULL,
    source_sha256 char(64) NOT NULL,
    pdf_object_key varchar(1024),
    pdf_rendition varchar(24),
    page_count integer,
    preview_pages jsonb NOT NULL DEFAULT '[]',
    summary jsonb,
    issue_list jsonb NOT NULL DEFAULT '[]',
    workspace_output jsonb,
    result_object_key varchar(1024),
    result_size_bytes bigint,
    error jsonb,
    generation_usage jsonb,
    estimated_cost jsonb,
    trace_id varchar(64) NOT NULL,
    attempt_count integer NOT NULL DEFAULT 0,
    lease_token uuid,
    lease_owner varchar(200),
    lease_expires_at timestamptz,
    last_attempt_started_at timestamptz,
    worker_heartbeat_at timestamptz,
    public_caller_hash char(64),
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    completed_at timestamptz
  )`);
  await sql('CREATE INDEX document_recognition_runs_created ON document_recognition_runs (created_at DESC)');
  await sql('CREATE INDEX document_recognition_runs_agent ON document_recognition_runs (runtime_agent_id, created_at DESC)');
  await sql(
    'CREATE INDEX document_recognition_runs_caller ON document_recognition_runs (public_caller_hash, created_at DESC) WHERE public_caller_hash IS NOT NULL',
  );
  await sql("CREATE INDEX document_recognition_runs_open ON document_recognition_runs (status) WHERE status IN ('queued', 'running', 'recovering')");
  await sql(`CREATE TABLE document_recognition_fields (
    run_id uuid NOT NULL REFERENCES document_recognition_runs (id) ON DELETE CASCADE,
    field_id varchar(200) NOT NULL,
    position integer NOT NULL,
    label text NOT NULL,
    extracted_value jsonb,
    confidence double precision,
    page_number integer,
    matched_text text,
    current_value jsonb,
    current_review_status varchar(16) NOT NULL DEFAULT 'unreviewed',
    current_reviewer_note text,
    PRIMARY KEY (run_id, field_id)
  )`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE document_recognition_fields');
  await qi.sequelize.query('DROP TABLE document_recognition_runs');
  await qi.sequelize.query('DROP TABLE document_recognition_runtime_agents');
}
