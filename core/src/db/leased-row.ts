import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';

/**
 * The columns of work a worker claims under a lease (ingestion jobs, scheduled runs): how often it was claimed, who
 * holds it until when, its last heartbeat, and when it was made, first started and ended.
 */
export interface LeasedRow {
  attempt_count: number;
  lease_owner: string | null;
  lease_expires_at: Date | null;
  worker_heartbeat_at: Date | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

/**
 * The heartbeat of a `running` row held under a lease: the lease is renewed for `leaseSeconds`; false when `owner`
 * (an instance, or an attempt's token when `holder` is `lease_token`) no longer holds it (the row was recovered by another worker, or ended).
 */
export async function renewLease(
  db: Sequelize,
  table: 'scheduled_task_runs' | 'evaluation_runs' | TokenLeasedTable,
  id: string,
  owner: string,
  leaseSeconds: number,
  holder: 'lease_owner' | 'lease_token' = 'lease_owner',
): Promise<boolean> {
  const rows = await db.query(
    `UPDATE ${table} SET lease_expires_at = now() + make_interval(secs => $3), worker_heartbeat_at = now()
     WHERE id = $1 AND ${holder} = $2 AND status = 'running' RETURNING id`,
    { bind: [id, owner, leaseSeconds], type: QueryTypes.SELECT },
  );
  return rows.length > 0;
}

/** Tables of work each attempt holds under its own `lease_token` (run by a `LeaseWorker`). */
export type TokenLeasedTable = 'fusion_runs' | 'etl_jobs' | 'document_recognition_runs';

/**
 * Claims the oldest `queued` or `recovering` row of `table` under a new lease token (one claimant, `FOR UPDATE SKIP
 * LOCKED`); `reset` names columns an attempt starts over (`rows_done = 0`).
 */
export async function claimLeased<Row extends object>(
  db: Sequelize,
  table: TokenLeasedTable,
  owner: string,
  leaseSeconds: number,
  reset = '',
): Promise<Row | undefined> {
  const [row] = await db.query<Row>(
    `UPDATE ${table} SET status = 'running', attempt_count = attempt_count + 1, lease_token = $3, lease_owner = $1,${reset ? ` ${reset},` : ''}
       lease_expires_at = now() + make_interval(secs => $2), worker_heartbeat_at = now(), last_attempt_started_at = now(),
       started_at = COALESCE(started_at, now())
     WHERE id = (SELECT id FROM ${table} WHERE status IN ('queued', 'recovering') ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
     RETURNING *`,
    { bind: [owner, leaseSeconds, randomUUID()], type: QueryTypes.SELECT },
  );
  return row;
}

/**
 * Rows of `table` whose worker stopped (lease lapsed) become `recovering`, to be claimed again; after `maxAttempts`
 * attempts they fail with the error `lostCode` (the `what` was given up).
 */
export async function recoverLeased(db: Sequelize, table: TokenLeasedTable, maxAttempts: number, lostCode: string, what: string): Promise<void> {
  await db.query(
    `UPDATE ${table} SET status = 'failed', completed_at = now(), lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
       error = jsonb_build_object('code', $2::text, 'message', 'its worker stopped ' || attempt_count || ' times; the ${what} was given up')
     WHERE status = 'running' AND lease_expires_at < now() AND attempt_count >= $1`,
    { bind: [maxAttempts, lostCode] },
  );
  await db.query(`UPDATE ${table} SET status = 'recovering', lease_owner = NULL, lease_token = NULL WHERE status = 'running' AND lease_expires_at < now()`);
}
