import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * The approval checkpoint of the tool pipeline (spec 4.13): a mount may require an operator's approval before its
 * tools are called; each held call is a request an operator approves (the call runs and its result is posted to the
 * session) or rejects.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('agent_mcp_mounts', 'approval', { type: DataTypes.TEXT, allowNull: false, defaultValue: 'none' });
  await qi.createTable('tool_approval_requests', {
    id: { type: DataTypes.UUID, primaryKey: true },
    session_id: { type: DataTypes.TEXT, allowNull: false },
    turn_id: { type: DataTypes.UUID, allowNull: false },
    agent_id: { type: DataTypes.UUID, allowNull: false },
    mount_id: { type: DataTypes.UUID, allowNull: false },
    mcp_server_id: { type: DataTypes.UUID, allowNull: false },
    tool_name: { type: DataTypes.TEXT, allowNull: false },
    arguments: { type: DataTypes.JSONB, allowNull: false },
    origin: { type: DataTypes.TEXT, allowNull: false },
    status: { type: DataTypes.TEXT, allowNull: false },
    decided_by: { type: DataTypes.UUID, allowNull: true },
    decided_at: { type: DataTypes.DATE, allowNull: true },
    result: { type: DataTypes.JSONB, allowNull: true },
    error_message: { type: DataTypes.TEXT, allowNull: true },
    result_message_id: { type: DataTypes.UUID, allowNull: true },
    created_at: { type: DataTypes.DATE, allowNull: false },
  });
  await qi.addIndex('tool_approval_requests', ['session_id', 'created_at']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('tool_approval_requests');
  await qi.removeColumn('agent_mcp_mounts', 'approval');
}
