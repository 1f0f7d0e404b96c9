import type { QueryInterface } from 'sequelize';

/**
 * Evaluation datasets of `task_type = document_recognition` (spec 4.9): an item is a reviewed run's source document
 * and its reviewed field values (`expected_fields`), imported once per run (`source_run_id`); a result keeps the
 * field-by-field comparison (`field_scores`).
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql(`ALTER TABLE evaluation_dataset_items
    ADD COLUMN source_run_id uuid,
    ADD COLUMN source_document jsonb,
    ADD COLUMN expected_fields jsonb`);
  await sql('CREATE UNIQUE INDEX evaluation_dataset_items_source_run ON evaluation_dataset_items (dataset_id, source_run_id) WHERE source_run_id IS NOT NULL');
  await sql('ALTER TABLE evaluation_results ADD COLUMN field_scores jsonb');
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql('ALTER TABLE evaluation_results DROP COLUMN field_scores');
  await sql('DROP INDEX evaluation_dataset_items_source_run');
  await sql('ALTER TABLE evaluation_dataset_items DROP COLUMN source_run_id, DROP COLUMN source_document, DROP COLUMN expected_fields');
}
