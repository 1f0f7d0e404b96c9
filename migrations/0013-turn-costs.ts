import { DataTypes, type QueryInterface } from 'sequelize';

/**
 * A turn's estimated cost as priced when it ran, each model call at its own
 * model (spec 2.5): the input and output parts next to the total, and whether
 * a call's model had no prices (`missing_pricing_count`), so the cost
 * overview sums what the request limits counted.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.addColumn('conversation_turns', 'estimated_input_cost_usd', { type: DataTypes.DECIMAL(14, 6), allowNull: true });
  await qi.addColumn('conversation_turns', 'estimated_output_cost_usd', { type: DataTypes.DECIMAL(14, 6), allowNull: true });
  await qi.addColumn('conversation_turns', 'pricing_missing', { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false });
  // Earlier turns without a cost were priced at a model without prices.
  await qi.sequelize.query(
    "UPDATE conversation_turns SET pricing_missing = true WHERE estimated_cost_usd IS NULL AND token_usage_source NOT IN ('no_model_invocation', 'unavailable')",
  );
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const column of ['pricing_missing', 'estimated_output_cost_usd', 'estimated_input_cost_usd']) await qi.removeColumn('conversation_turns', column);
}
