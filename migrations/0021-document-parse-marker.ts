import { DataTypes, type QueryInterface } from 'sequelize';

/** Set while a document is being parsed: still set when the next attempt starts, that parse never finished. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('knowledge_documents', 'parse_started_at', { type: DataTypes.DATE, allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('knowledge_documents', 'parse_started_at');
}
