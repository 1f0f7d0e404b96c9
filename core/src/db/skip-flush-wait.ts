const FLUSH_WAIT_OFF = `set_config('synchronous_commit', 'off', true)`;

/**
 * A result column that lets the statement's transaction commit without waiting for its WAL to reach the disk. Only for
 * statements whose writes matter only with what the same request stores next (budgets, a ticket, the session a turn
 * starts or opens): that later statement waits for the flush, which covers everything written before it. Should
 * Postgres crash in between, a few takes of a budget, and the ticket and session of a turn that failed with it, are
 * all that can be lost. It also ends the statement's row locks (the shared budget rows') without the flush
 * (docs/data-access.md).
 */
export const SKIP_FLUSH_WAIT = `${FLUSH_WAIT_OFF} AS flush_wait`;

/**
 * {@link SKIP_FLUSH_WAIT} unless the statement's CTE `cte` returned a row: what it wrote is answered at once (a
 * customer's message shown to the session) and must not be lost, so the commit then waits for the flush.
 */
export const skipFlushWaitUnless = (cte: string) => `CASE WHEN NOT EXISTS (SELECT 1 FROM ${cte}) THEN ${FLUSH_WAIT_OFF} END AS flush_wait`;
