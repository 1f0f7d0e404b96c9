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
