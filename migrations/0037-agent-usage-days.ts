import type { QueryInterface } from 'sequelize';

/**
 * Each agent's counted turns, tokens and cost of each closed UTC day, written by the limit check the first time a
 * monthly limit needs that day (`RequestLimitStore.agentUsage`): a check then reads today's turns and these totals,
 * not the whole month's turns.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`CREATE TABLE agent_usage_days (
    agent_id uuid NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
    day date NOT NULL,
    turns bigint NOT NULL,
    tokens bigint NOT NULL,
    cost_usd numeric NOT NULL,
    PRIMARY KEY (agent_id, day)
  )`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE agent_usage_days');
}
