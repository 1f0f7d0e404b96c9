import { DataTypes, Sequelize, type QueryInterface } from 'sequelize';

/**
 * Knowledge (spec 2.6, 4.8): sources, their mounts on agents, documents with
 * their parse snapshots and chunks (kept for the keyword fallback and for
 * rebuilds), ingestion jobs with their lease, inspect runs, and the agents'
 * `retrieval_config` (top_k and score threshold).
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const now = { type: DataTypes.DATE, allowNull: false, defaultValue: Sequelize.fn('now') };
  const optionalTime = { type: DataTypes.DATE, allowNull: true };
  const jsonObject = { type: DataTypes.JSONB, allowNull: false, defaultValue: {} };
  const source = { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_sources', key: 'id' }, onDelete: 'CASCADE' };

  await qi.addColumn('agents', 'retrieval_config', { type: DataTypes.JSONB, allowNull: true });

  await qi.createTable('knowledge_sources', {
    id: { type: DataTypes.UUID, primaryKey: true },
    name: { type: DataTypes.STRING(200), allowNull: false },
    description: { type: DataTypes.TEXT, allowNull: false, defaultValue: '' },
    source_kind: { type: DataTypes.STRING(32), allowNull: false, defaultValue: 'standard' },
    managed_for_agent_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    priority: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    chunking_strategy: { type: DataTypes.STRING(64), allowNull: false },
    chunking_params: jsonObject,
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });

  await qi.createTable('knowledge_mounts', {
    id: { type: DataTypes.UUID, primaryKey: true },
    agent_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'agents', key: 'id' }, onDelete: 'CASCADE' },
    source_id: source,
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
  });
  await qi.addIndex('knowledge_mounts', ['agent_id', 'source_id'], { unique: true });

  await qi.createTable('knowledge_documents', {
    id: { type: DataTypes.UUID, primaryKey: true },
    source_id: source,
    filename: { type: DataTypes.STRING(500), allowNull: false },
    content_type: { type: DataTypes.STRING(200), allowNull: false },
    size_bytes: { type: DataTypes.BIGINT, allowNull: false },
    sha256: { type: DataTypes.STRING(64), allowNull: false },
    object_key: { type: DataTypes.STRING(1024), allowNull: false },
    status: { type: DataTypes.STRING(32), allowNull: false },
    vector_status: { type: DataTypes.STRING(32), allowNull: false },
    expected_point_count: { type: DataTypes.INTEGER, allowNull: true },
    actual_point_count: { type: DataTypes.INTEGER, allowNull: true },
    vector_verified_at: optionalTime,
    vector_collection: { type: DataTypes.STRING(200), allowNull: true },
    chunking_strategy: { type: DataTypes.STRING(64), allowNull: true },
    chunking_params: { type: DataTypes.JSONB, allowNull: true },
    error_message: { type: DataTypes.TEXT, allowNull: true },
    metadata_json: jsonObject,
    indexed_at: optionalTime,
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    updated_at: now,
  });
  await qi.addIndex('knowledge_documents', ['source_id', 'created_at']);

  await qi.createTable('knowledge_parse_snapshots', {
    document_id: { type: DataTypes.UUID, primaryKey: true, references: { model: 'knowledge_documents', key: 'id' }, onDelete: 'CASCADE' },
    text: { type: DataTypes.TEXT, allowNull: false },
    elements: { type: DataTypes.JSONB, allowNull: false },
    metadata: jsonObject,
    created_at: now,
  });

  await qi.createTable('knowledge_chunks', {
    id: { type: DataTypes.STRING(80), primaryKey: true },
    document_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_documents', key: 'id' }, onDelete: 'CASCADE' },
    source_id: { type: DataTypes.UUID, allowNull: false },
    chunk_index: { type: DataTypes.INTEGER, allowNull: false },
    content: { type: DataTypes.TEXT, allowNull: false },
    metadata: jsonObject,
    search_vector: { type: 'TSVECTOR', allowNull: false },
  });
  await qi.addIndex('knowledge_chunks', ['document_id', 'chunk_index']);
  await qi.addIndex('knowledge_chunks', ['source_id']);
  await qi.sequelize.query('CREATE INDEX knowledge_chunks_search ON knowledge_chunks USING GIN (search_vector)');

  await qi.createTable('ingestion_jobs', {
    id: { type: DataTypes.UUID, primaryKey: true },
    source_id: source,
    job_kind: { type: DataTypes.STRING(32), allowNull: false },
    status: { type: DataTypes.STRING(32), allowNull: false },
    document_ids: { type: DataTypes.JSONB, allowNull: false },
    documents_total: { type: DataTypes.INTEGER, allowNull: false },
    documents_done: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    documents_failed: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    document_results: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    chunking_strategy: { type: DataTypes.STRING(64), allowNull: true },
    chunking_params: { type: DataTypes.JSONB, allowNull: true },
    error_message: { type: DataTypes.TEXT, allowNull: true },
    attempt_count: { type: DataTypes.INTEGER, allowNull: false, defaultValue: 0 },
    lease_owner: { type: DataTypes.STRING(200), allowNull: true },
    lease_expires_at: optionalTime,
    worker_heartbeat_at: optionalTime,
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    started_at: optionalTime,
    completed_at: optionalTime,
    updated_at: now,
  });
  await qi.addIndex('ingestion_jobs', ['source_id', 'created_at']);
  await qi.addIndex('ingestion_jobs', ['status', 'lease_expires_at']);

  await qi.createTable('knowledge_inspect_runs', {
    id: { type: DataTypes.UUID, primaryKey: true },
    source_id: source,
    inspection_mode: { type: DataTypes.STRING(32), allowNull: false },
    candidate_chunking_strategy: { type: DataTypes.STRING(64), allowNull: true },
    candidate_chunking_params: { type: DataTypes.JSONB, allowNull: true },
    document_ids: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
    status: { type: DataTypes.STRING(32), allowNull: false },
    summary: jsonObject,
    error_message: { type: DataTypes.TEXT, allowNull: true },
    created_by: { type: DataTypes.UUID, allowNull: true },
    created_at: now,
    completed_at: optionalTime,
  });
  await qi.addIndex('knowledge_inspect_runs', ['source_id', 'created_at']);

  // Results outlive their document (spec 2.6): document_id becomes null, the filename stays.
  await qi.createTable('knowledge_inspect_results', {
    id: { type: DataTypes.UUID, primaryKey: true },
    run_id: { type: DataTypes.UUID, allowNull: false, references: { model: 'knowledge_inspect_runs', key: 'id' }, onDelete: 'CASCADE' },
    document_id: { type: DataTypes.UUID, allowNull: true, references: { model: 'knowledge_documents', key: 'id' }, onDelete: 'SET NULL' },
    document_filename: { type: DataTypes.STRING(500), allowNull: false },
    position: { type: DataTypes.INTEGER, allowNull: false },
    outcome: { type: DataTypes.STRING(32), allowNull: false },
    details: jsonObject,
    recommendations: { type: DataTypes.JSONB, allowNull: false, defaultValue: [] },
  });
  await qi.addIndex('knowledge_inspect_results', ['run_id', 'position']);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  for (const table of [
    'knowledge_inspect_results',
    'knowledge_inspect_runs',
    'ingestion_jobs',
    'knowledge_chunks',
    'knowledge_parse_snapshots',
    'knowledge_documents',
    'knowledge_mounts',
    'knowledge_sources',
  ]) {
    await qi.dropTable(table);
  }
  await qi.removeColumn('agents', 'retrieval_config');
}
