import type { QueryInterface } from 'sequelize';

/**
 * Fusion (spec 2.9, 4.11, 5.7): a Fusion agent's definition (a snapshot field like the rest of the agent), its runs,
 * and the public API keys that open its published version to other systems. A run is claimed under a lease by one
 * worker at a time (`lease_token` fences each attempt, so a recovered run is never finished twice); a key is kept as
 * its SHA-256 only, found by its public prefix.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql('ALTER TABLE agents ADD COLUMN fusion_definition jsonb');
  await sql(`CREATE TABLE agent_public_api_keys (
    id uuid PRIMARY KEY,
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    label varchar(200) NOT NULL,
    prefix varchar(32) NOT NULL UNIQUE,
    token_hash char(64) NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    revoked_by uuid,
    last_used_at timestamptz,
    created_by uuid,
    created_at timestamptz NOT NULL
  )`);
  await sql('CREATE INDEX agent_public_api_keys_agent ON agent_public_api_keys (agent_id, created_at DESC)');
  await sql(`CREATE TABLE fusion_runs (
    id uuid PRIMARY KEY,
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    agent_version_id uuid,
    channel varchar(16) NOT NULL,
    status varchar(24) NOT NULL,
    definition jsonb NOT NULL,
    model_binding jsonb NOT NULL,
    inputs jsonb NOT NULL,
    output_item_list jsonb,
    error jsonb,
    governance_context jsonb,
    trace_id varchar(64) NOT NULL,
    generation_usage jsonb,
    estimated_cost jsonb,
    attempt_count integer NOT NULL DEFAULT 0,
    lease_token uuid,
    lease_owner varchar(200),
    lease_expires_at timestamptz,
    last_attempt_started_at timestamptz,
    worker_heartbeat_at timestamptz,
    created_by uuid,
    authenticated_agent_api_key_id uuid REFERENCES agent_public_api_keys (id) ON DELETE SET NULL,
    public_caller_hash char(64),
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    completed_at timestamptz
  )`);
  await sql('CREATE INDEX fusion_runs_agent ON fusion_runs (agent_id, created_at DESC)');
  await sql('CREATE INDEX fusion_runs_key ON fusion_runs (authenticated_agent_api_key_id, created_at DESC) WHERE authenticated_agent_api_key_id IS NOT NULL');
  await sql('CREATE INDEX fusion_runs_caller ON fusion_runs (public_caller_hash, created_at DESC) WHERE public_caller_hash IS NOT NULL');
  await sql("CREATE INDEX fusion_runs_open ON fusion_runs (status) WHERE status IN ('queued', 'running', 'recovering')");
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE fusion_runs');
  await qi.sequelize.query('DROP TABLE agent_public_api_keys');
  await qi.sequelize.query('ALTER TABLE agents DROP COLUMN fusion_definition');
}
