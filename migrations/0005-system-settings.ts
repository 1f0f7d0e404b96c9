import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/** Runtime overrides of configuration keys, changed through PATCH /admin/system-settings/{config_key}. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('system_settings', {
    config_key: { type: DataTypes.STRING(120), primaryKey: true },
    value: { type: DataTypes.JSONB, allowNull: false },
    updated_by: { type: DataTypes.UUID, allowNull: true },
    updated_at: { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('system_settings');
}
