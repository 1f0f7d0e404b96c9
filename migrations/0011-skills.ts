import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/**
 * Skills (spec 2.8, 3.3, 4.12): skill assets, their versions (drafts edited
 * in place, released ones immutable), mounts of released versions on agents
 * with their policy, and the audit of every skill call.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') };

  await qi.createTable('skills', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.STRING(64), allowNull: false },
    description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  // The name is the tool name a runtime shows the model, so it is unique whatever its letter case.
  await qi.sequelize.query('CREATE UNIQUE INDEX skills_name_unique ON skills (lower(name))');

  await qi.createTable('skill_versions', {
    id: { type: DataTypes.UUID, primaryKey: true },
    skill_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'skills', key: 'id' }, onDelete: 'CASCADE' },
    version_number: { type: DataTypes.INTEGER, allowNull: false },
    backend_type: { type: DataTypes.STRING(64), allowNull: false },
    // No foreign key: what it names depends on the backend (an MCP server for `mcp`).
    backend_ref_id: { type: DataTypes.STRING(200), allowNull: true },
    config: { type: DataTypes.JSONB, allowNull: false, defaultValue: {} },
    is_released: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    released_at: { type: DataTypes.DATE, allowNull: true },
    released_by: { type: DataTypes.UUID, allowNull: true },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addIndex('skill_versions', ['skill_id', 'version_number'], { unique: true });

  await qi.createTable('agent_skill_mounts', {
    id: { type: DataTypes.UUID, primaryKey: true },
    agent_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    // Denormalised from the version so one skill is mounted once per agent and its name stays unambiguous there.
    skill_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'skills', key: 'id' } },
    skill_version_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'skill_versions', key: 'id' } },
    is_active: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: true },
    priority: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    timeout_ms: { type: DataTypes.INTEGER, allowNull: false },
    max_calls_per_turn: { type: DataTypes.INTEGER, allowNull: false },
    tool_allowlist: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addIndex('agent_skill_mounts', ['agent_id', 'skill_id'], { unique: true });

  await qi.createTable('skill_call_audits', {
    id: { type: DataTypes.UUID, primaryKey: true },
    // No foreign keys: a turn's row is written when the turn ends, its audits as they happen.
    session_id: { type: DataTypes.STRING(200), allowNull: true },
    turn_id: { type: DataTypes.UUID, allowNull: true },
    agent_id: { type: DataTypes.UUID, allowNull: true },
    mount_id: { type: DataTypes.UUID, allowNull: true },
    skill_id: { type: DataTypes.UUID, allowNull: true },
    skill_version_id: { type: DataTypes.UUID, allowNull: true },
    skill_name: { type: DataTypes.STRING(64), allowNull: false },
    version_number: { type: DataTypes.INTEGER, allowNull: true },
    backend_type: { type: DataTypes.STRING(64), allowNull: true },
    backend_ref_id: { type: DataTypes.STRING(200), allowNull: true },
    tool_name: { type: DataTypes.STRING(200), allowNull: true },
    status: { type: DataTypes.STRING(16), allowNull: false },
    trace_id: { type: DataTypes.STRING(64), allowNull: true },
    request_payload: { type: DataTypes.JSONB, allowNull: true },
    response_payload: { type: DataTypes.JSONB, allowNull: true },
    error_message: { type: DataTypes.TEXT, allowNull: true },
    latency_ms: { type: DataTypes.INTEGER, allowNull: true },
    created_at: now,
  });
  await qi.addIndex('skill_call_audits', ['session_id', 'created_at']);
  await qi.addIndex('skill_call_audits', ['agent_id', 'created_at']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('skill_call_audits');
  await qi.dropTable('agent_skill_mounts');
  await qi.dropTable('skill_versions');
  await qi.dropTable('skills');
}
