import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/**
 * Managed corrections (spec 2.3, 3.2): one correction draft per AI turn, and
 * its publication ledger, one row per publish attempt. A publish ingests a
 * candidate document into the agent's one `managed_correction` source; the
 * correction's `document_id` names the document retrieval serves.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') };
  const optionalTime = { type: DataTypes.DATE, allowNull: true };
  const optionalText = { type: DataTypes.TEXT, allowNull: true };
  const document = { type: DataTypes.UUID, allowNull: true, references: { model: 'knowledge_documents', key: 'id' }, onDelete: 'SET NULL' };
  const job = { type: DataTypes.UUID, allowNull: true, references: { model: 'ingestion_jobs', key: 'id' }, onDelete: 'SET NULL' };

  await qi.sequelize.query(
    "CREATE UNIQUE INDEX knowledge_sources_one_managed_per_agent ON knowledge_sources (managed_for_agent_id) WHERE source_kind = 'managed_correction'",
  );

  await qi.createTable('knowledge_corrections', {
    id: { type: DataTypes.UUID, primaryKey: true },
    turn_id: { type: DataTypes.UUID, allowNull: false, unique: true, references: { model: 'conversation_turns', key: 'id' }, onDelete: 'CASCADE' },
    session_id: { type: DataTypes.STRING(200), allowNull: false, references: { model: 'chat_sessions', key: 'id' }, onDelete: 'CASCADE' },
    agent_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    status: { type: DataTypes.STRING(32), allowNull: false },
    revision_number: { type: DataTypes.INTEGER, allowNull: false },
    manual_reply_message_id: { type: DataTypes.UUID, allowNull: true },
    original_user_message: { type: DataTypes.TEXT, allowNull: false },
    original_ai_answer: { type: DataTypes.TEXT, allowNull: false },
    corrected_question: { type: DataTypes.TEXT, allowNull: false },
    corrected_answer: { type: DataTypes.TEXT, allowNull: false },
    correction_note: optionalText,
    source_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'knowledge_sources', key: 'id' }, onDelete: 'SET NULL' },
    document_id: document,
    published_revision_number: { type: DataTypes.INTEGER, allowNull: true },
    // The newest publish attempt; a publication with a lower sequence is stale when it settles.
    publish_sequence: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    ingestion_job_id: job,
    last_error_message: optionalText,
    published_at: optionalTime,
    created_by: { type: DataTypes.UUID, allowNull: true },
    updated_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addIndex('knowledge_corrections', ['document_id']);

  await qi.createTable('knowledge_correction_publications', {
    id: { type: DataTypes.UUID, primaryKey: true },
    correction_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_corrections', key: 'id' }, onDelete: 'CASCADE' },
    source_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_sources', key: 'id' }, onDelete: 'CASCADE' },
    sequence: { type: DataTypes.INTEGER, allowNull: false },
    revision_number: { type: DataTypes.INTEGER, allowNull: false },
    status: { type: DataTypes.STRING(32), allowNull: false },
    corrected_question: { type: DataTypes.TEXT, allowNull: false },
    corrected_answer: { type: DataTypes.TEXT, allowNull: false },
    document_id: document,
    document_filename: { type: DataTypes.STRING(500), allowNull: false },
    ingestion_job_id: job,
    error_message: optionalText,
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    completed_at: optionalTime,
  });
  await qi.addIndex('knowledge_correction_publications', ['correction_id', 'sequence'], { unique: true });
  await qi.addIndex('knowledge_correction_publications', ['source_id', 'created_at']);
  await qi.addIndex('knowledge_correction_publications', ['status']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.dropTable('knowledge_correction_publications');
  await qi.dropTable('knowledge_corrections');
  await qi.sequelize.query('DROP INDEX IF EXISTS knowledge_sources_one_managed_per_agent');
}
