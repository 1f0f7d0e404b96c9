import type { QueryInterface } from 'sequelize';

/**
 * Whether a turn's ticket is first in its session's line, read with a snapshot of its own: the statement that takes
 * the ticket opens the session in the same round trip only when it is (`ConversationStore.admitToSession`). That
 * statement's own snapshot predates the wait on the line's lock, so a ticket committed during that wait is seen only
 * here (plpgsql runs each query of a volatile function with a new snapshot). `seen_xmin` is the session row's `xmin`
 * in the calling statement's snapshot: a session row written since (a turn stored, a takeover) makes the answer no,
 * as that statement's history would miss it. A session under human takeover is never opened this way.
 *
 * Both of its lookups go by key (`enable_seqscan` off while it runs): the plans plpgsql keeps are made from the
 * tables' statistics, and with them stale (a line's tickets come and go by the thousand between two autovacuums, new
 * sessions too) a sequential scan read every dead ticket or every session on each call.
 */
export async function up({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query(`CREATE FUNCTION session_line_first(line_session varchar, line_ticket bigint, seen_xmin xid) RETURNS boolean
    LANGUAGE plpgsql VOLATILE SET enable_seqscan = off AS $$
    DECLARE
      fresh record;
    BEGIN
      IF EXISTS (SELECT 1 FROM session_turn_queue WHERE session_id = line_session AND id < line_ticket AND expires_at > now()) THEN
        RETURN false;
      END IF;
      SELECT xmin, status INTO fresh FROM chat_sessions WHERE id = line_session;
      IF NOT FOUND THEN
        RETURN seen_xmin IS NULL;
      END IF;
      RETURN seen_xmin IS NOT NULL AND fresh.xmin = seen_xmin AND fresh.status <> 'HUMAN_ACTIVE';
    END $$`);
}

export async function down({ context: qi }: { context: QueryInterface }): Promise<void> {
  await qi.sequelize.query('DROP FUNCTION session_line_first(varchar, bigint, xid)');
}
