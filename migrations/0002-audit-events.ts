import { DataTypes, type QueryInterface } from 'sequelize';

/** Append-only audit log (ARCHITECTURE.md section 4). */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.createTable('audit_events', {
    id: { type: DataTypes.BIGINT, autoIncrement: true, primaryKey: true },
    action: { type: DataTypes.STRING(120), allowNull: false },
    outcome: { type: DataTypes.STRING(16), allowNull: false },
    actor_id: { type: DataTypes.STRING(120), allowNull: true },
    target_type: { type: DataTypes.STRING(80), allowNull: true },
    target_id: { type: DataTypes.STRING(120), allowNull: true },
    trace_id: { type: DataTypes.STRING(64), allowNull: true },
    source: { type: DataTypes.STRING(80), allowNull: false },
    payload: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
    created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: DataTypes.NOW },
  });
  await qi.addIndex('audit_events', ['created_at']);
  await qi.addIndex('audit_events', ['action', 'created_at']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('audit_events');
}
