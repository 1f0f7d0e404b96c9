import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/**
 * MCP tools (spec 2.7, 4.13): tool servers, their credentials (the secret
 * only as AES-256-GCM ciphertext), mounts of servers on agents with their
 * policy, and the audit of every tool call, block and skip.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') };

  await qi.createTable('mcp_servers', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.STRING(200), allowNull: false },
    description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
    transport_type: { type: DataTypes.STRING(64), allowNull: false },
    connection_config: { type: DataTypes.JSONB, allowNull: false },
    credential_schema: { type: DataTypes.JSONB, allowNull: true },
    // The credential is attached after both exist; see the foreign key below.
    credential_id: { type: DataTypes.UUID, allowNull: true },
    status: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'active' },
    last_health_check_at: { type: DataTypes.DATE, allowNull: true },
    last_health_message: { type: DataTypes.TEXT, allowNull: true },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.sequelize.query('CREATE UNIQUE INDEX mcp_servers_name_unique ON mcp_servers (lower(name))');

  await qi.createTable('mcp_credentials', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.STRING(200), allowNull: false },
    description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
    scope: { type: DataTypes.STRING(32), allowNull: false },
    // Set for scope `server`: the only server that may use the credential.
    mcp_server_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'mcp_servers', key: 'id' }, onDelete: 'CASCADE' },
    encrypted_secret_json: { type: DataTypes.TEXT, allowNull: false },
    secret_keys: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    rotated_at: { type: DataTypes.DATE, allowNull: true },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addConstraint('mcp_servers', {
    type: 'foreign key',
    name: 'mcp_servers_credential_fk',
    fields: ['credential_id'],
    references: { table: 'mcp_credentials', field: 'id' },
    onDelete: 'SET NULL',
    onUpdate: 'CASCADE',
  });

  await qi.createTable('agent_mcp_mounts', {
    id: { type: DataTypes.UUID, primaryKey: true },
    agent_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    mcp_server_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'mcp_servers', key: 'id' } },
    allowed_tools_json: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    tool_capability: { type: DataTypes.STRING(100), allowNull: true },
    timeout_ms: { type: DataTypes.INTEGER, allowNull: false },
    max_calls_per_turn: { type: DataTypes.INTEGER, allowNull: false },
    priority: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addIndex('agent_mcp_mounts', ['agent_id', 'mcp_server_id'], { unique: true });

  await qi.createTable('mcp_call_audits', {
    id: { type: DataTypes.UUID, primaryKey: true },
    // No foreign keys: a turn's row is written when the turn ends, its audits as they happen.
    session_id: { type: DataTypes.STRING(200), allowNull: true },
    turn_id: { type: DataTypes.UUID, allowNull: true },
    agent_id: { type: DataTypes.UUID, allowNull: true },
    mount_id: { type: DataTypes.UUID, allowNull: true },
    mcp_server_id: { type: DataTypes.UUID, allowNull: true },
    server_name: { type: DataTypes.STRING(200), allowNull: true },
    tool_name: { type: DataTypes.STRING(200), allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false },
    stage: { type: DataTypes.STRING(64), allowNull: false },
    origin: { type: DataTypes.STRING(32), allowNull: false },
    reason: { type: DataTypes.TEXT, allowNull: true },
    trace_id: { type: DataTypes.STRING(64), allowNull: true },
    round: { type: DataTypes.INTEGER, allowNull: true },
    request_payload: { type: DataTypes.JSONB, allowNull: true },
    response_payload: { type: DataTypes.JSONB, allowNull: true },
    error_message: { type: DataTypes.TEXT, allowNull: true },
    latency_ms: { type: DataTypes.INTEGER, allowNull: true },
    created_at: now,
  });
  await qi.addIndex('mcp_call_audits', ['session_id', 'created_at']);
  await qi.addIndex('mcp_call_audits', ['agent_id', 'created_at']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('mcp_call_audits');
  await qi.dropTable('agent_mcp_mounts');
  await qi.removeConstraint('mcp_servers', 'mcp_servers_credential_fk');
  await qi.dropTable('mcp_credentials');
  await qi.dropTable('mcp_servers');
}
