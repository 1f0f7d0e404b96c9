import type { QueryInterface } from 'sequelize';

/**
 * Evaluation datasets and their items (spec 2.9, 4.9). Freezing a dataset makes a child dataset, `frozen`, whose
 * `parent_dataset_id` names the dataset it was frozen from: its items and source CSV are copies that never change.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`CREATE TABLE evaluation_datasets (
    id uuid PRIMARY KEY,
    name varchar(200) NOT NULL,
    description text NOT NULL DEFAULT '',
    task_type varchar(32) NOT NULL,
    frozen boolean NOT NULL DEFAULT false,
    parent_dataset_id uuid REFERENCES evaluation_datasets (id),
    frozen_at timestamptz,
    item_count integer NOT NULL DEFAULT 0,
    source_csv_object_key text,
    source_csv_filename varchar(255),
    source_csv_content_type varchar(255),
    source_csv_size_bytes bigint,
    source_csv_uploaded_at timestamptz,
    created_by uuid,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`);
  await sql('CREATE INDEX evaluation_datasets_parent ON evaluation_datasets (parent_dataset_id)');
  await sql(`CREATE TABLE evaluation_dataset_items (
    id uuid PRIMARY KEY,
    dataset_id uuid NOT NULL REFERENCES evaluation_datasets (id) ON DELETE CASCADE,
    position integer NOT NULL,
    question text NOT NULL,
    expected_answers jsonb NOT NULL,
    domain varchar(200),
    difficulty varchar(200),
    source varchar(500),
    metadata jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL,
    UNIQUE (dataset_id, position)
  )`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TABLE evaluation_dataset_items');
  await qi.sequelize.query('DROP TABLE evaluation_datasets');
}
