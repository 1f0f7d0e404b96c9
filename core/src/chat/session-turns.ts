import { ConflictError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../admin/operation.js';
import { LEASE_SECONDS } from './request-limits.js';

/**
 * What a session does with a message that arrives while it is answering another (an agent's `multitask_strategy`):
 * `reject` refuses it with 409 `SESSION_BUSY`, `enqueue` answers it once the turns before it are done, in order.
 */
export const MULTITASK_STRATEGIES = ['enqueue', 'reject'] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** How often a waiting turn looks whether it is its turn. */
const WAIT_POLL_MS = 250;
/** How often a running turn looks for an administrator's cancel: a query a second per running turn, not more. */
const CANCEL_POLL_MS = 1000;

/** Who asked a running turn to stop. */
export interface Cancellation {
  by: string;
}

/**
 * A place in a session's line of turns. The first live ticket of a session runs; the others wait. Tickets live in
 * Postgres, so the line holds across host instances, and expire unless renewed, so a crashed instance's turn frees
 * the session within a lease.
 */
export class TurnTicket {
  private renewal: NodeJS.Timeout;
  private left = false;

  constructor(
    private readonly db: Sequelize,
    readonly id: string,
    readonly sessionId: string,
    private readonly leaseSeconds: number,
  ) {
    this.renewal = setInterval(
      () => {
        // A failed renewal is retried on the next tick.
        this.db
          .query('UPDATE session_turn_queue SET expires_at = now() + make_interval(secs => $2) WHERE id = $1', { bind: [this.id, this.leaseSeconds] })
          .catch(() => undefined);
      },
      (this.leaseSeconds * 1000) / 3,
    );
    this.renewal.unref();
  }

  /** Whether this ticket is the session's running one: no live ticket is ahead of it. */
  async first(): Promise<boolean> {
    const [ahead] = await this.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM session_turn_queue WHERE session_id = $1 AND id < $2 AND expires_at > now()',
      { bind: [this.sessionId, this.id], type: QueryTypes.SELECT },
    );
    return ahead!.n === 0;
  }

  /** Resolves once the turns ahead are done; `false` when `signal` stops the wait or `timeoutMs` passes first. */
  async waitForTurn(signal: AbortSignal, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.first())) {
      if (signal.aborted || Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    }
    return true;
  }

  /** Names the turn this ticket runs, so an administrator's cancel can say which turn it stopped. */
  async running(turnId: string): Promise<void> {
    await this.db.query('UPDATE session_turn_queue SET turn_id = $2 WHERE id = $1', { bind: [this.id, turnId] });
  }

  /** Calls `onCancel` once an administrator cancels this ticket's turn; returns the function that stops watching. */
  watchCancel(onCancel: (cancellation: Cancellation) => void): () => void {
    let stopped = false;
    const poll = setInterval(() => {
      this.db
        .query<{ cancelled_by: string | null }>('SELECT cancelled_by FROM session_turn_queue WHERE id = $1', { bind: [this.id], type: QueryTypes.SELECT })
        .then(([row]) => {
          if (!stopped && row?.cancelled_by) {
            stopped = true;
            clearInterval(poll);
            onCancel({ by: row.cancelled_by });
          }
        })
        .catch(() => undefined);
    }, CANCEL_POLL_MS);
    poll.unref();
    return () => {
      stopped = true;
      clearInterval(poll);
    };
  }

  /** Leaves the line (the turn is done, refused or abandoned); the next ticket runs. Safe to call twice. */
  async leave(): Promise<void> {
    if (this.left) return;
    this.left = true;
    clearInterval(this.renewal);
    await this.db.query("DELETE FROM session_turn_queue WHERE id = $1 OR expires_at < now() - interval '1 hour'", { bind: [this.id] });
  }
}

/** One turn at a time per session, across instances (issue: double texting). */
export class SessionTurns {
  constructor(
    private readonly db: Sequelize,
    private readonly instanceId: string,
    private readonly leaseSeconds = LEASE_SECONDS,
  ) {}

  /** Joins the session's line; the caller must `leave` the ticket whatever happens. */
  async enter(sessionId: string): Promise<TurnTicket> {
    const [row] = await this.db.query<{ id: string }>(
      `INSERT INTO session_turn_queue (session_id, instance_id, expires_at, created_at)
       VALUES ($1, $2, now() + make_interval(secs => $3), now()) RETURNING id::text AS id`,
      { bind: [sessionId, this.instanceId, this.leaseSeconds], type: QueryTypes.SELECT },
    );
    return new TurnTicket(this.db, row!.id, sessionId, this.leaseSeconds);
  }

  /**
   * Asks the session's running turn to stop, and audits it; the instance running it notices within a poll, answers
   * the caller an error event and stores the turn as `cancelled` with the usage spent so far. 409 when nothing runs.
   */
  async cancel(sessionId: string, op: Operation): Promise<{ session_id: string; turn_id: string | null; status: 'cancelling' }> {
    const by = op.operator.display_name || op.operator.username;
    const row = await this.db.transaction(async (transaction) => {
      const [cancelled] = await this.db.query<{ turn_id: string | null }>(
        `UPDATE session_turn_queue SET cancelled_by = $2
         WHERE id = (SELECT min(id) FROM session_turn_queue WHERE session_id = $1 AND expires_at > now()) AND cancelled_by IS NULL
         RETURNING turn_id::text AS turn_id`,
        { bind: [sessionId, by], type: QueryTypes.SELECT, transaction },
      );
      if (!cancelled) throw new ConflictError(`session ${sessionId} is not answering anything to cancel`, { code: 'NO_TURN_RUNNING' });
      await auditOperation(
        this.db,
        'core.chat',
        op,
        { action: 'session.turn.cancel', target_type: 'chat_session', target_id: sessionId, payload: { turn_id: cancelled.turn_id } },
        transaction,
      );
      return cancelled;
    });
    return { session_id: sessionId, turn_id: row.turn_id, status: 'cancelling' };
  }
}
