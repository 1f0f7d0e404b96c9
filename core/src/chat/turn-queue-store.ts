import { QueryTypes, type Transaction } from 'sequelize';
import { deletedCount } from '../db/deleted-count.js';
import { SqlStore } from '../db/sql-store.js';

/**
 * Drops ticket `$ticket` from its line, by its key. Tickets a crashed instance left are swept apart
 * (`TurnQueueStore.sweepLapsed`): swept here too, the `OR` made every turn scan the whole table, whose rows come and go
 * with every turn.
 */
export const leaveLine = (ticket: string) => `DELETE FROM session_turn_queue WHERE id = ${ticket}::bigint`;

/** The first key of a session line's advisory lock (`joinLine`), its second the session id's hash: "line" in ASCII. */
const LINE_LOCK = 0x6c696e65;

/**
 * Joins a session's line: inserts a ticket, returning its `id` and `session_id`. The values are SQL expressions:
 * parameters, or the columns of `from` when the session comes from the same statement (`ConversationStore.openSession`,
 * `ConversationStore.issueSession`); `where` is a condition the ticket is taken on (the minute budgets',
 * `ConversationStore.admitToSession`). The ticket is numbered under a lock of the session's line held until the
 * statement commits, so a ticket numbered ahead of another is committed before the other's statement goes on:
 * `session_line_first` (migration `0038`) then sees every ticket ahead.
 */
export const joinLine = (v: { session: string; turn: string; instance: string; seconds: string }, { from, where }: { from?: string; where?: string } = {}) =>
  `INSERT INTO session_turn_queue (session_id, turn_id, instance_id, expires_at, created_at)
   SELECT ${v.session}, ${v.turn}::uuid, ${v.instance}::text, now() + make_interval(secs => ${v.seconds}::double precision), now()
   FROM ${from ? `${from} CROSS JOIN LATERAL ` : ''}(SELECT pg_advisory_xact_lock(${LINE_LOCK}, hashtext(${v.session}))) AS line_lock${where ? ` WHERE ${where}` : ''}
   RETURNING id::text AS id, session_id`;

/** The SQL of each session's line of turns: the `session_turn_queue` table, one row a ticket. */
export class TurnQueueStore extends SqlStore {
  async renew(ticketId: string, seconds: number): Promise<void> {
    await this.db.query('UPDATE session_turn_queue SET expires_at = now() + make_interval(secs => $2) WHERE id = $1', { bind: [ticketId, seconds] });
  }

  /** How many live tickets of the session are ahead of this one. */
  async ahead(sessionId: string, ticketId: string): Promise<number> {
    const [row] = await this.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM session_turn_queue WHERE session_id = $1 AND id < $2 AND expires_at > now()',
      { bind: [sessionId, ticketId], type: QueryTypes.SELECT },
    );
    return row!.n;
  }

  /** Who cancelled the ticket's turn, if anyone. */
  async cancelledBy(ticketId: string): Promise<string | null> {
    const [row] = await this.db.query<{ cancelled_by: string | null }>('SELECT cancelled_by FROM session_turn_queue WHERE id = $1', {
      bind: [ticketId],
      type: QueryTypes.SELECT,
    });
    return row?.cancelled_by ?? null;
  }

  /** Drops the tickets that expired over an hour ago, a crashed instance's, which no turn will leave; how many. */
  async sweepLapsed(): Promise<number> {
    return deletedCount(this.db, "DELETE FROM session_turn_queue WHERE expires_at < now() - interval '1 hour'");
  }

  /** Leaves the line (`leaveLine`). */
  async delete(ticketId: string): Promise<void> {
    await this.db.query(leaveLine('$1'), { bind: [ticketId] });
  }

  /** Marks the session's running ticket cancelled by `by`; resolves with its turn, or `undefined` when none runs. */
  async cancelRunning(sessionId: string, by: string, transaction: Transaction): Promise<{ turn_id: string | null } | undefined> {
    const [row] = await this.db.query<{ turn_id: string | null }>(
      `UPDATE session_turn_queue SET cancelled_by = $2
       WHERE id = (SELECT min(id) FROM session_turn_queue WHERE session_id = $1 AND expires_at > now()) AND cancelled_by IS NULL
       RETURNING turn_id::text AS turn_id`,
      { bind: [sessionId, by], type: QueryTypes.SELECT, transaction },
    );
    return row;
  }
}
