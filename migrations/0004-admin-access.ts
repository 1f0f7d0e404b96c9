import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/**
 * Administrator access (spec 3.5, 4.5, 5): users, sessions with hashed
 * single-use refresh tokens, permission grants, challenges, login throttling.
 * The audit log becomes `admin_action_audits`, the name the spec uses.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') };
  await qi.createTable('admin_users', {
    id: { type: DataTypes.UUID, primaryKey: true },
    username: { type: DataTypes.STRING(120), allowNull: false },
    display_name: { type: DataTypes.STRING(200), allowNull: false, defaultValue: '' },
    password_hash: { type: DataTypes.STRING(255), allowNull: false },
    role_code: { type: DataTypes.STRING(32), allowNull: false },
    status: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'active' },
    is_protected: { type: DataTypes.BOOLEAN, allowNull: false, defaultValue: false },
    last_login_at: { type: DataTypes.DATE, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.sequelize.query('CREATE UNIQUE INDEX admin_users_username_lower ON admin_users (lower(username))');

  await qi.createTable('admin_sessions', {
    id: { type: DataTypes.UUID, primaryKey: true },
    admin_user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'admin_users', key: 'id' }, onDelete: 'CASCADE' },
    refresh_token_hash: { type: DataTypes.STRING(64), allowNull: false, unique: true },
    access_version: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 1 },
    refresh_expires_at: { type: DataTypes.DATE, allowNull: false },
    revoked_at: { type: DataTypes.DATE, allowNull: true },
    revoked_reason: { type: DataTypes.STRING(64), allowNull: true },
    client_ip: { type: DataTypes.STRING(64), allowNull: true },
    user_agent: { type: DataTypes.STRING(400), allowNull: true },
    created_at: now,
    last_seen_at: now,
  });
  await qi.addIndex('admin_sessions', ['admin_user_id']);

  await qi.createTable('admin_permission_grants', {
    id: { type: DataTypes.UUID, primaryKey: true },
    admin_user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'admin_users', key: 'id' }, onDelete: 'CASCADE' },
    permission_code: { type: DataTypes.STRING(80), allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'active' },
    granted_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    revoked_at: { type: DataTypes.DATE, allowNull: true },
  });
  await qi.sequelize.query(
    "CREATE UNIQUE INDEX admin_permission_grants_active ON admin_permission_grants (admin_user_id, permission_code) WHERE status = 'active'",
  );

  await qi.createTable('admin_challenges', {
    id: { type: DataTypes.UUID, primaryKey: true },
    admin_user_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'admin_users', key: 'id' }, onDelete: 'CASCADE' },
    session_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'admin_sessions', key: 'id' }, onDelete: 'CASCADE' },
    nonce: { type: DataTypes.STRING(64), allowNull: false },
    status: { type: DataTypes.STRING(16), allowNull: false, defaultValue: 'pending' },
    expires_at: { type: DataTypes.DATE, allowNull: false },
    token_hash: { type: DataTypes.STRING(64), allowNull: true, unique: true },
    token_expires_at: { type: DataTypes.DATE, allowNull: true },
    used_at: { type: DataTypes.DATE, allowNull: true },
    created_at: now,
  });

  await qi.createTable('admin_login_throttles', {
    throttle_key: { type: DataTypes.STRING(200), primaryKey: true },
    failures: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    locked_until: { type: DataTypes.DATE, allowNull: true },
    updated_at: now,
  });

  await qi.renameTable('audit_events', 'admin_action_audits');
  await qi.addColumn('admin_action_audits', 'client_ip', { type: DataTypes.STRING(64), allowNull: true });
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.removeColumn('admin_action_audits', 'client_ip');
  await qi.renameTable('admin_action_audits', 'audit_events');
  for (const table of ['admin_login_throttles', 'admin_challenges', 'admin_permission_grants', 'admin_sessions', 'admin_users']) {
    await qi.dropTable(table);
  }
}
