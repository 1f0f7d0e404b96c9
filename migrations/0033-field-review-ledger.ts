import type { QueryInterface } from 'sequelize';

/**
 * The field-review ledger (spec 2.9, 9.7): every effective review change of a document-recognition field appends a
 * revision, in the same transaction as the field's new current state. Revisions are append-only, enforced by the
 * database: a trigger refuses every UPDATE and DELETE. Runs made before this migration keep `history_recorded =
 * false` (their timelines say `history_status = unrecorded`: earlier changes were never recorded).
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql('ALTER TABLE document_recognition_runs ADD COLUMN history_recorded boolean NOT NULL DEFAULT false');
  await sql(`ALTER TABLE document_recognition_fields
    ADD COLUMN revision_count integer NOT NULL DEFAULT 0,
    ADD COLUMN last_revised_at timestamptz,
    ADD COLUMN last_revised_by jsonb`);
  await sql(`CREATE TABLE document_recognition_field_revisions (
    id uuid PRIMARY KEY,
    run_id uuid NOT NULL,
    field_id varchar(200) NOT NULL,
    revision_number integer NOT NULL,
    value jsonb,
    review_status varchar(16) NOT NULL,
    reviewer_note text,
    previous_value jsonb,
    previous_review_status varchar(16) NOT NULL,
    previous_reviewer_note text,
    changed jsonb NOT NULL,
    reviewer_identity jsonb,
    created_at timestamptz NOT NULL,
    UNIQUE (run_id, field_id, revision_number),
    FOREIGN KEY (run_id, field_id) REFERENCES document_recognition_fields (run_id, field_id)
  )`);
  await sql(`CREATE FUNCTION document_recognition_revisions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'document-recognition field revisions are append-only: % refused', TG_OP USING ERRCODE = 'restrict_violation';
    END $$`);
  await sql(`CREATE TRIGGER document_recognition_revisions_append_only BEFORE UPDATE OR DELETE ON document_recognition_field_revisions
    FOR EACH ROW EXECUTE FUNCTION document_recognition_revisions_append_only()`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  const sql = (statement: string) => qi.sequelize.query(statement);
  await sql('DROP TABLE document_recognition_field_revisions');
  await sql('DROP FUNCTION document_recognition_revisions_append_only()');
  await sql('ALTER TABLE document_recognition_fields DROP COLUMN revision_count, DROP COLUMN last_revised_at, DROP COLUMN last_revised_by');
  await sql('ALTER TABLE document_recognition_runs DROP COLUMN history_recorded');
}
