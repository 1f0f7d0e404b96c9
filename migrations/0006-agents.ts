import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/** Agents (spec 2.4) and their immutable version snapshots (4.7, 9.1). */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') };
  const json = { type: DataTypes.JSONB, allowNull: true };
  const limit = { type: DataTypes.BIGINT, allowNull: true };
  await qi.createTable('agents', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.STRING(200), allowNull: false },
    description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
    agent_type: { type: DataTypes.STRING(32), allowNull: false },
    status: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'active' },
    orchestrator_key: { type: DataTypes.STRING(120), allowNull: true },
    system_prompt: { type: DataTypes.TEXT, allowNull: true },
    judge_prompt: { type: DataTypes.TEXT, allowNull: true },
    public_access_mode: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'admin_only' },
    published_agent_version_id: { type: DataTypes.UUID, allowNull: true },
    human_takeover_enabled: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    hide_rag_source_filename: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    model_name: { type: DataTypes.STRING(200), allowNull: true },
    model_provider: { type: DataTypes.STRING(80), allowNull: true },
    model_temperature: { type: DataTypes.DOUBLE, allowNull: true },
    model_routing_config: json,
    message_type_response_config: json,
    mcp_response_config: json,
    mcp_runtime_config: json,
    response_grounding_config: json,
    max_concurrent_requests: limit,
    max_total_requests: limit,
    max_requests_per_day: limit,
    max_total_tokens_daily: limit,
    max_total_tokens_monthly: limit,
    max_cost_usd_daily: { type: DataTypes.DECIMAL(14, 6), allowNull: true },
    max_cost_usd_monthly: { type: DataTypes.DECIMAL(14, 6), allowNull: true },
    max_tool_calls_total_per_request: limit,
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addIndex('agents', ['status', 'public_access_mode']);

  await qi.createTable('agent_versions', {
    id: { type: DataTypes.UUID, primaryKey: true },
    agent_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    version_number: { type: DataTypes.INTEGER, allowNull: false },
    reason: { type: DataTypes.STRING(32), allowNull: false },
    note: { type: DataTypes.TEXT, allowNull: true },
    snapshot: { type: DataTypes.JSONB, allowNull: false },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
  });
  await qi.addIndex('agent_versions', ['agent_id', 'version_number'], { unique: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('agent_versions');
  await qi.dropTable('agents');
}
