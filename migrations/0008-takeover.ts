import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/**
 * Human takeover (spec 3.1): the owner snapshot on the session, the durable
 * takeover event stream, metadata on system messages (`{status}`), and the
 * attachment table the socket.io Postgres adapter uses for payloads too big
 * for one NOTIFY.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const optionalText = { type: DataTypes.STRING(200), allowNull: true };
  const optionalTime = { type: DataTypes.DATE, allowNull: true };
  await qi.addColumn('chat_sessions', 'takeover_owner_id', optionalText);
  await qi.addColumn('chat_sessions', 'takeover_owner_name', optionalText);
  await qi.addColumn('chat_sessions', 'takeover_owner_admin_user_id', { type: DataTypes.UUID, allowNull: true });
  await qi.addColumn('chat_sessions', 'takeover_started_at', optionalTime);
  await qi.addColumn('chat_sessions', 'takeover_released_at', optionalTime);
  await qi.addColumn('chat_messages', 'metadata', { type: DataTypes.JSONB, allowNull: true });

  await qi.createTable('session_takeover_events', {
    id: { type: DataTypes.UUID, primaryKey: true },
    session_id: { type: DataTypes.STRING(200), allowNull: false, references: { model: 'chat_sessions', key: 'id' }, onDelete: 'CASCADE' },
    event_type: { type: DataTypes.STRING(32), allowNull: false },
    operator_id: { type: DataTypes.STRING(200), allowNull: false },
    operator_name: optionalText,
    admin_user_id: { type: DataTypes.UUID, allowNull: true },
    previous_owner_id: optionalText,
    message_id: { type: DataTypes.UUID, allowNull: true },
    channel: { type: DataTypes.STRING(16), allowNull: false },
    created_at: { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') },
  });
  await qi.addIndex('session_takeover_events', ['session_id', 'created_at']);

  await qi.sequelize.query('CREATE TABLE IF NOT EXISTS socket_io_attachments (id bigserial UNIQUE, created_at timestamptz DEFAULT now(), payload bytea)');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('socket_io_attachments');
  await qi.dropTable('session_takeover_events');
  await qi.removeColumn('chat_messages', 'metadata');
  for (const column of ['takeover_released_at', 'takeover_started_at', 'takeover_owner_admin_user_id', 'takeover_owner_name', 'takeover_owner_id']) {
    await qi.removeColumn('chat_sessions', column);
  }
}
