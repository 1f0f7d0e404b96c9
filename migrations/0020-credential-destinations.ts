import { DataTypes, type QueryInterface } from 'sequelize';

/** An MCP credential may be bound to the destinations it may be sent to (URL origins, stdio commands); empty: any. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('mcp_credentials', 'allowed_destinations', { type: DataTypes.JSONB, allowNull: false, defaultValue: [] });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('mcp_credentials', 'allowed_destinations');
}
