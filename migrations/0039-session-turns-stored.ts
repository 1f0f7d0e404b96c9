import type { QueryInterface } from 'sequelize';

/**
 * What storing turns does to their sessions: each session's row updated (its activity time, the agent of its latest
 * turn, a model override and time zone the turn brought) and each turn's ticket removed from its session's line
 * (`ConversationStore` calls it from the statement storing the turns, with that statement's rows).
 *
 * Each row is found by its key, one turn at a time, with `enable_seqscan` off while it runs. In the storing statement
 * itself, Postgres kept one plan per connection, made from the tables' sizes when the connection first stored turns:
 * made on a new database, it scanned every session on each turn until an autovacuum made it plan again, and the line,
 * whose dead tickets pile up by the thousand between two autovacuums, was scanned whole at any size.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`CREATE FUNCTION session_turns_stored(turns jsonb) RETURNS void
    LANGUAGE plpgsql VOLATILE SET enable_seqscan = off AS $$
    DECLARE
      turn record;
    BEGIN
      FOR turn IN SELECT * FROM jsonb_to_recordset(turns) AS u (session_id varchar, agent_id uuid, override_model_name varchar,
          override_model_provider varchar, override_model_temperature float8, time_zone varchar, ticket_id bigint) ORDER BY session_id LOOP
        UPDATE chat_sessions SET updated_at = now(), last_turn_agent_id = COALESCE(turn.agent_id, last_turn_agent_id),
          model_name = COALESCE(turn.override_model_name, model_name),
          model_provider = COALESCE(turn.override_model_provider, model_provider),
          model_temperature = COALESCE(turn.override_model_temperature, model_temperature),
          time_zone = COALESCE(turn.time_zone, time_zone)
        WHERE id = turn.session_id;
        DELETE FROM session_turn_queue WHERE id = turn.ticket_id;
      END LOOP;
    END $$`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP FUNCTION session_turns_stored(jsonb)');
}
