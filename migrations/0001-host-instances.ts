import { DataTypes, type QueryInterface } from 'sequelize';

/** One row per host process start: what `/healthz` reports as `app_instance`. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('host_instances', {
    id: { type: DataTypes.STRING(120), primaryKey: true },
    hostname: { type: DataTypes.STRING(255), allowNull: false },
    pid: { type: DataTypes.INTEGER, allowNull: false },
    app_env: { type: DataTypes.STRING(32), allowNull: false },
    started_at: { type: DataTypes.DATE, allowNull: false },
    stopped_at: { type: DataTypes.DATE, allowNull: true },
  });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('host_instances');
}
