import { DataTypes, type QueryInterface } from 'sequelize';

/** Parses of a document begun and not yet finished: above zero when the next attempt starts, they never finished. */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('knowledge_documents', 'unfinished_parses', { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('knowledge_documents', 'unfinished_parses');
}
