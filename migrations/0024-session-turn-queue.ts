import type { QueryInterface } from 'sequelize';

/**
 * One turn at a time per session: the line of turns of each session (the first live ticket runs), and each agent's
 * `multitask_strategy` for a message that arrives while its session is answering (`enqueue` or `reject`).
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE TABLE session_turn_queue (
    id bigserial PRIMARY KEY,
    session_id varchar(255) NOT NULL,
    instance_id varchar(255) NOT NULL,
    turn_id uuid,
    cancelled_by varchar(255),
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
  )`);
  await sql('CREATE INDEX session_turn_queue_session ON session_turn_queue (session_id, id)');
  await sql("ALTER TABLE agents ADD COLUMN multitask_strategy varchar(16) NOT NULL DEFAULT 'enqueue' CHECK (multitask_strategy IN ('enqueue', 'reject'))");
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql('ALTER TABLE agents DROP COLUMN multitask_strategy');
  await sql('DROP TABLE session_turn_queue');
}
