import { DataTypes, type QueryInterface } from 'sequelize';

/** Login and challenge throttling moved to the shared rate-limit buckets (`rate_limit_buckets`); its own table goes. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('admin_login_throttles');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('admin_login_throttles', {
    throttle_key: { type: DataTypes.STRING(200), primaryKey: true },
    failures: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    locked_until: { type: DataTypes.DATE, allowNull: true },
    updated_at: { type: DataTypes.DATE, allowNull: false },
  });
}
