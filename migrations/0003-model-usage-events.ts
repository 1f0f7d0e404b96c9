import { DataTypes, type QueryInterface } from 'sequelize';

/** Token usage of each model call, under the scope it belongs to (turn, run, evaluation item). */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('model_usage_events', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    scope_kind: { type: DataTypes.STRING(40), allowNull: false },
    scope_id: { type: DataTypes.STRING(120), allowNull: false },
    model_provider: { type: DataTypes.STRING(80), allowNull: false },
    model_name: { type: DataTypes.STRING(200), allowNull: false },
    input_tokens: { type: DataTypes.INTEGER, allowNull: false },
    output_tokens: { type: DataTypes.INTEGER, allowNull: false },
    token_usage_source: { type: DataTypes.STRING(32), allowNull: false },
    source: { type: DataTypes.STRING(80), allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
  });
  await qi.addIndex('model_usage_events', ['scope_kind', 'scope_id']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('model_usage_events');
}
