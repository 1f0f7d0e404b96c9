import type { QueryInterface } from 'sequelize';

/** Each audit row names the HTTP request that wrote it (its `X-Request-Id`), to join the audit trail with the logs. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('ALTER TABLE admin_action_audits ADD COLUMN request_id varchar(128)');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('ALTER TABLE admin_action_audits DROP COLUMN request_id');
}
