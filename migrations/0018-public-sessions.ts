import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * Sessions that belong to their client (issue 16): a session an anonymous client started carries a server-issued,
 * unguessable id and is marked so, and only such sessions are continued anonymously. Rate-limit buckets are rows
 * shared by every instance (the table shape `rate-limiter-flexible` reads and writes).
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('chat_sessions', 'issued_publicly', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
  await qi.createTable('rate_limit_buckets', {
    key: { type: DataTypes.STRING(255), primaryKey: true },
    points: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    expire: { type: DataTypes.BIGINT, allowNull: true },
  });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('rate_limit_buckets');
  await qi.removeColumn('chat_sessions', 'issued_publicly');
}
