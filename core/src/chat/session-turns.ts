import { ConflictError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../admin/operation.js';
import { LEASE_SECONDS } from './request-limits.js';
import { TakeoverHints } from './takeover-hints.js';
import { TurnQueueStore } from './turn-queue-store.js';

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
  /** Once first, a ticket stays first: tickets ahead only leave, and later ones line up behind it. */
  private knownFirst: boolean;

  constructor(
    private readonly store: TurnQueueStore,
    readonly id: string,
    readonly sessionId: string,
    private readonly leaseSeconds: number,
    /**
     * Known first: taken with a session this very request started (no other request knows it), or by a statement that
     * found it first and opened its session (`ConversationStore.admitToSession`).
     */
    fresh: boolean,
  ) {
    this.knownFirst = fresh;
    this.renewal = setInterval(
      () => {
        // A failed renewal is retried on the next tick.
        this.store.renew(this.id, this.leaseSeconds).catch(() => undefined);
      },
      (this.leaseSeconds * 1000) / 3,
    );
    this.renewal.unref();
  }

  /** Whether this ticket is the session's running one: no live ticket is ahead of it. */
  async first(): Promise<boolean> {
    if (!this.knownFirst) this.knownFirst = (await this.store.ahead(this.sessionId, this.id)) === 0;
    return this.knownFirst;
  }

  /**
   * The ticket to check in the statement that opens the session (`OpenSessionOptions.firstIn`) while it is not known
   * to be first: that statement opens the session only if it is, saving the round trip of asking first.
   */
  get unconfirmed(): string | null {
    return this.knownFirst ? null : this.id;
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

  /** Calls `onCancel` once an administrator cancels this ticket's turn; returns the function that stops watching. */
  watchCancel(onCancel: (cancellation: Cancellation) => void): () => void {
    let stopped = false;
    const poll = setInterval(() => {
      this.store
        .cancelledBy(this.id)
        .then((by) => {
          if (!stopped && by) {
            stopped = true;
            clearInterval(poll);
            onCancel({ by });
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
    this.leftWithTurn();
    await this.store.delete(this.id);
  }

  /**
   * The statement that stored the turn removed the ticket too (`ConversationStore.persistTurn`, or `openSession` with
   * a message under human takeover): nothing to send.
   */
  leftWithTurn(): void {
    this.left = true;
    clearInterval(this.renewal);
  }
}

/** One turn at a time per session, across instances (issue: double texting). */
export class SessionTurns {
  private readonly store: TurnQueueStore;
  /** A customer's message to a session under takeover skips the line: which sessions this instance saw so. */
  readonly takeovers = new TakeoverHints();

  constructor(
    /** For the audit row of a cancel. */
    private readonly db: Sequelize,
    private readonly instanceId: string,
    private readonly leaseSeconds = LEASE_SECONDS,
  ) {
    this.store = new TurnQueueStore(db);
  }

  /**
   * The values of turn `turnId`'s place in a session's line, for the statement that takes it: the one taking the
   * turn's minute budgets (`ConversationStore.admitToSession`, which also opens the session when the ticket is first),
   * or, for a session this request starts, the one creating it (`ConversationStore.openSession`). `taken` makes the
   * ticket that statement returned, which the caller must `leave` whatever happens.
   */
  lineFor(turnId: string) {
    return { turnId, instanceId: this.instanceId, seconds: this.leaseSeconds };
  }

  /** Drops the tickets a crashed instance left, expired over an hour ago; how many. */
  sweepLapsed(): Promise<number> {
    return this.store.sweepLapsed();
  }

  /** The ticket a statement took (see `lineFor`); `fresh` when it is known first (`TurnTicket`). */
  taken(sessionId: string, ticketId: string, fresh: boolean): TurnTicket {
    return new TurnTicket(this.store, ticketId, sessionId, this.leaseSeconds, fresh);
  }

  /**
   * Asks the session's running turn to stop, and audits it; the instance running it notices within a poll, answers
   * the caller an error event and stores the turn as `cancelled` with the usage spent so far. 409 when nothing runs.
   */
  async cancel(sessionId: string, op: Operation): Promise<{ session_id: string; turn_id: string | null; status: 'cancelling' }> {
    const by = op.operator.display_name || op.operator.username;
    const row = await this.store.transaction(async (transaction) => {
      const cancelled = await this.store.cancelRunning(sessionId, by, transaction);
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
