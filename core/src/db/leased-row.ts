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
  table: 'scheduled_task_runs' | 'evaluation_runs' | 'fusion_runs' | 'etl_jobs',
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
