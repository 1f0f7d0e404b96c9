import type { QueryInterface } from 'sequelize';

/**
 * A turn's context snapshot no longer has a foreign key to its turn: a deleted turn's snapshot is deleted by a
 * statement trigger instead (a session's deletion cascades to its turns, and so to their snapshots, as before).
 *
 * Why: the key was checked for every snapshot stored, and the check locked the turn row the same statement had just
 * written (a query of its own, and a WAL record): a sixth to a fifth of the Postgres CPU of storing a turn, on one
 * connection. It checked nothing: snapshots are written only by the statement storing turns
 * (`ConversationStore.persistTurns`), each from the same row as its turn, so the snapshot is stored with its turn or
 * the statement fails.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('ALTER TABLE turn_context_snapshots DROP CONSTRAINT turn_context_snapshots_turn_id_fkey');
  await qi.sequelize.query(`CREATE FUNCTION turn_context_snapshots_of_deleted_turns() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM turn_context_snapshots s USING deleted_turns d WHERE s.turn_id = d.id;
      RETURN NULL;
    END $$`);
  await qi.sequelize.query(`CREATE TRIGGER conversation_turns_delete_snapshots AFTER DELETE ON conversation_turns
    REFERENCING OLD TABLE AS deleted_turns FOR EACH STATEMENT EXECUTE FUNCTION turn_context_snapshots_of_deleted_turns()`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP TRIGGER conversation_turns_delete_snapshots ON conversation_turns');
  await qi.sequelize.query('DROP FUNCTION turn_context_snapshots_of_deleted_turns()');
  await qi.sequelize.query(`ALTER TABLE turn_context_snapshots ADD CONSTRAINT turn_context_snapshots_turn_id_fkey
    FOREIGN KEY (turn_id) REFERENCES conversation_turns(id) ON DELETE CASCADE`);
}
