import type { QueryInterface } from 'sequelize';

/**
 * `GET /sessions?q=` on trigram indexes (substring search without reading every message), and each session's
 * effective agent (its binding, else the agent of its latest turn that had one) a generated column instead of a
 * subquery per row: turns keep `last_turn_agent_id`, Postgres derives the rest whoever writes the session.
 * pg_trgm is a trusted extension: a database owner may create it.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql('CREATE EXTENSION IF NOT EXISTS pg_trgm');
  await sql('ALTER TABLE chat_sessions ADD COLUMN last_turn_agent_id uuid');
  await sql(`UPDATE chat_sessions cs SET last_turn_agent_id =
    (SELECT t.agent_id FROM conversation_turns t WHERE t.session_id = cs.id AND t.agent_id IS NOT NULL ORDER BY t.created_at DESC LIMIT 1)`);
  await sql('ALTER TABLE chat_sessions ADD COLUMN effective_agent_id uuid GENERATED ALWAYS AS (COALESCE(agent_id, last_turn_agent_id)) STORED');
  await sql('CREATE INDEX chat_sessions_effective_agent ON chat_sessions (effective_agent_id, updated_at DESC, id DESC)');
  await sql('CREATE INDEX chat_sessions_id_trgm ON chat_sessions USING gin (id gin_trgm_ops)');
  await sql('CREATE INDEX chat_messages_content_trgm ON chat_messages USING gin (content gin_trgm_ops)');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql('DROP INDEX IF EXISTS chat_messages_content_trgm');
  await sql('DROP INDEX IF EXISTS chat_sessions_id_trgm');
  await sql('DROP INDEX IF EXISTS chat_sessions_effective_agent');
  await sql('ALTER TABLE chat_sessions DROP COLUMN effective_agent_id');
  await sql('ALTER TABLE chat_sessions DROP COLUMN last_turn_agent_id');
}
