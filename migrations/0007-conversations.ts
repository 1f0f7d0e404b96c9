import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/**
 * Conversations (spec 2.2): sessions keyed by the caller's thread id,
 * messages, turns with their model and usage, turn context snapshots, and
 * the per-agent leases that hold max_concurrent_requests across instances.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') };
  await qi.createTable('chat_sessions', {
    id: { type: DataTypes.STRING(200), primaryKey: true },
    agent_id: { type: DataTypes.UUID, allowNull: true },
    status: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'AI_ACTIVE' },
    model_name: { type: DataTypes.STRING(200), allowNull: true },
    model_provider: { type: DataTypes.STRING(80), allowNull: true },
    model_temperature: { type: DataTypes.DOUBLE, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addIndex('chat_sessions', ['agent_id', 'updated_at']);

  await qi.createTable('chat_messages', {
    id: { type: DataTypes.UUID, primaryKey: true },
    session_id: { type: DataTypes.STRING(200), allowNull: false, references: { model: 'chat_sessions', key: 'id' }, onDelete: 'CASCADE' },
    turn_id: { type: DataTypes.UUID, allowNull: true },
    role: { type: DataTypes.STRING(32), allowNull: false },
    content: { type: DataTypes.TEXT, allowNull: false },
    message_type: { type: DataTypes.STRING(32), allowNull: true },
    sender_id_snapshot: { type: DataTypes.STRING(200), allowNull: true },
    sender_name_snapshot: { type: DataTypes.STRING(200), allowNull: true },
    created_at: now,
  });
  await qi.addIndex('chat_messages', ['session_id', 'created_at']);

  await qi.createTable('conversation_turns', {
    id: { type: DataTypes.UUID, primaryKey: true },
    session_id: { type: DataTypes.STRING(200), allowNull: false, references: { model: 'chat_sessions', key: 'id' }, onDelete: 'CASCADE' },
    agent_id: { type: DataTypes.UUID, allowNull: true },
    user_message_id: { type: DataTypes.UUID, allowNull: false },
    assistant_message_id: { type: DataTypes.UUID, allowNull: true },
    message_type: { type: DataTypes.STRING(32), allowNull: false },
    orchestrator_key: { type: DataTypes.STRING(120), allowNull: true },
    response_source: { type: DataTypes.STRING(64), allowNull: false },
    status: { type: DataTypes.STRING(32), allowNull: false },
    error_message: { type: DataTypes.TEXT, allowNull: true },
    model_name: { type: DataTypes.STRING(200), allowNull: true },
    model_provider: { type: DataTypes.STRING(80), allowNull: true },
    model_temperature: { type: DataTypes.DOUBLE, allowNull: true },
    input_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    output_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    total_tokens: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    token_usage_source: { type: DataTypes.STRING(32), allowNull: false },
    estimated_cost_usd: { type: DataTypes.DECIMAL(14, 6), allowNull: true },
    counts_toward_limits: { type: DataTypes.BOOLEAN, allowNull: false },
    caller_key: { type: DataTypes.STRING(200), allowNull: true },
    trace_id: { type: DataTypes.STRING(64), allowNull: false },
    first_token_ms: { type: DataTypes.INTEGER, allowNull: true },
    latency_ms: { type: DataTypes.INTEGER, allowNull: false },
    created_at: now,
  });
  await qi.addIndex('conversation_turns', ['session_id', 'created_at']);
  await qi.addIndex('conversation_turns', ['agent_id', 'created_at']);
  await qi.addIndex('conversation_turns', ['caller_key', 'created_at']);

  await qi.createTable('turn_context_snapshots', {
    turn_id: { type: DataTypes.UUID, primaryKey: true, references: { model: 'conversation_turns', key: 'id' }, onDelete: 'CASCADE' },
    observability_schema_version: { type: DataTypes.STRING(16), allowNull: false },
    context: { type: DataTypes.JSONB, allowNull: false },
    created_at: now,
  });

  await qi.createTable('agent_request_leases', {
    id: { type: DataTypes.UUID, primaryKey: true },
    agent_id: { type: DataTypes.UUID, allowNull: false },
    instance_id: { type: DataTypes.STRING(120), allowNull: false },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    created_at: now,
  });
  await qi.addIndex('agent_request_leases', ['agent_id', 'expires_at']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const table of ['agent_request_leases', 'turn_context_snapshots', 'conversation_turns', 'chat_messages', 'chat_sessions']) await qi.dropTable(table);
}
