import type { QueryInterface } from 'sequelize';

/** The time zone a chat's caller gave (`time_zone` on a chat request): scheduled tasks made in the chat read times in it. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('ALTER TABLE chat_sessions ADD COLUMN time_zone varchar(64)');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('ALTER TABLE chat_sessions DROP COLUMN time_zone');
}
