import type { QueryInterface } from 'sequelize';

/**
 * Scheduled tasks and their runs. A run is one due time of its task, so `(task_id, due_at)` is unique: whichever
 * instance fires a due time first records the run, and every other instance finds it there. A run holds no token
 * columns; its usage is read from the turn it produced.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE TABLE scheduled_tasks (
    id uuid PRIMARY KEY,
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    session_id varchar(200) REFERENCES chat_sessions (id) ON DELETE CASCADE,
    schedule_kind varchar(16) NOT NULL,
    schedule_payload jsonb NOT NULL,
    payload jsonb NOT NULL,
    target_mode varchar(32) NOT NULL,
    conflict_policy varchar(16) NOT NULL,
    status varchar(16) NOT NULL,
    next_run_at timestamptz,
    created_via varchar(16) NOT NULL,
    created_by uuid,
    caller_key varchar(300),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    cancelled_at timestamptz
  )`);
  await sql("CREATE INDEX scheduled_tasks_due ON scheduled_tasks (next_run_at) WHERE status = 'active'");
  await sql('CREATE INDEX scheduled_tasks_agent ON scheduled_tasks (agent_id, created_at DESC)');
  await sql('CREATE INDEX scheduled_tasks_session ON scheduled_tasks (session_id, created_at DESC)');
  await sql(`CREATE TABLE scheduled_task_runs (
    id uuid PRIMARY KEY,
    task_id uuid NOT NULL REFERENCES scheduled_tasks (id) ON DELETE CASCADE,
    due_at timestamptz NOT NULL,
    status varchar(24) NOT NULL,
    reason text,
    session_id varchar(200),
    turn_id uuid,
    attempt_count integer NOT NULL DEFAULT 0,
    lease_owner varchar(200),
    lease_expires_at timestamptz,
    worker_heartbeat_at timestamptz,
    created_at timestamptz NOT NULL,
    started_at timestamptz,
    completed_at timestamptz,
    UNIQUE (task_id, due_at)
  )`);
  await sql('CREATE INDEX scheduled_task_runs_task ON scheduled_task_runs (task_id, created_at DESC)');
  await sql("CREATE INDEX scheduled_task_runs_open ON scheduled_task_runs (status) WHERE status IN ('queued', 'running', 'recovering', 'deferred')");
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE scheduled_task_runs');
  await qi.sequelize.query('DROP TABLE scheduled_tasks');
}
