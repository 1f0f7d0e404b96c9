import type { QueryInterface } from 'sequelize';

/**
 * The replies in which a grounded agent asked for a person, by session: the sessions list shows each session's
 * latest (`handoff_requested_at`) without reading the rest of its messages.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`CREATE INDEX chat_messages_handoff_requests ON chat_messages (session_id, created_at)
    WHERE role = 'assistant' AND metadata->>'grounding_path' = 'low_confidence_handoff'`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP INDEX chat_messages_handoff_requests');
}
