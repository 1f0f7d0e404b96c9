import type { QueryInterface } from 'sequelize';

/**
 * Evaluation runs and their results (spec 2.9, 3.4). A run snapshots what it evaluates (the agent's runtime, model
 * routing and judge prompt) and is claimed under a lease by one worker at a time; a result is one item's answer and
 * scores, unique per run and item, so an item recovered after a worker stopped is never scored twice. A gate verdict
 * keeps the policy it applied and why it failed.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE TABLE evaluation_runs (
    id uuid PRIMARY KEY,
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    dataset_id uuid NOT NULL REFERENCES evaluation_datasets (id),
    status varchar(24) NOT NULL,
    orchestrator_key varchar(120) NOT NULL,
    model_name varchar(200),
    model_provider varchar(80),
    model_temperature double precision,
    model_routing_config jsonb,
    judge_prompt text NOT NULL,
    judge_prompt_version varchar(40) NOT NULL,
    item_count integer NOT NULL,
    error_message text,
    attempt_count integer NOT NULL DEFAULT 0,
    lease_owner varchar(200),
    lease_expires_at timestamptz,
    worker_heartbeat_at timestamptz,
    created_by uuid,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    completed_at timestamptz
  )`);
  await sql('CREATE INDEX evaluation_runs_agent ON evaluation_runs (agent_id, created_at DESC)');
  await sql('CREATE INDEX evaluation_runs_dataset ON evaluation_runs (dataset_id, created_at DESC)');
  await sql("CREATE INDEX evaluation_runs_open ON evaluation_runs (status) WHERE status IN ('queued', 'running', 'recovering')");
  await sql(`CREATE TABLE evaluation_results (
    id uuid PRIMARY KEY,
    run_id uuid NOT NULL REFERENCES evaluation_runs (id) ON DELETE CASCADE,
    item_id uuid NOT NULL,
    position integer NOT NULL,
    question text NOT NULL,
    expected_answers jsonb NOT NULL,
    domain varchar(200),
    difficulty varchar(200),
    source varchar(500),
    predicted_answer text,
    response_source varchar(64),
    status varchar(16) NOT NULL,
    error_message text,
    rule_score jsonb,
    judge_status varchar(24) NOT NULL,
    judge_score jsonb,
    grounding jsonb,
    generation_input_tokens integer NOT NULL,
    generation_output_tokens integer NOT NULL,
    generation_total_tokens integer NOT NULL,
    generation_usage_source varchar(32) NOT NULL,
    judge_input_tokens integer NOT NULL,
    judge_output_tokens integer NOT NULL,
    judge_total_tokens integer NOT NULL,
    judge_usage_source varchar(32) NOT NULL,
    latency_ms integer NOT NULL,
    generation_cost jsonb NOT NULL,
    judge_cost jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (run_id, item_id)
  )`);
  await sql('CREATE INDEX evaluation_results_run ON evaluation_results (run_id, position)');
  await sql(`CREATE TABLE evaluation_gate_verdicts (
    id uuid PRIMARY KEY,
    run_id uuid NOT NULL REFERENCES evaluation_runs (id) ON DELETE CASCADE,
    passed boolean NOT NULL,
    policy jsonb NOT NULL,
    metrics jsonb NOT NULL,
    reasons jsonb NOT NULL,
    created_by uuid,
    created_at timestamptz NOT NULL
  )`);
  await sql('CREATE INDEX evaluation_gate_verdicts_run ON evaluation_gate_verdicts (run_id, created_at DESC)');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE evaluation_gate_verdicts');
  await qi.sequelize.query('DROP TABLE evaluation_results');
  await qi.sequelize.query('DROP TABLE evaluation_runs');
}
