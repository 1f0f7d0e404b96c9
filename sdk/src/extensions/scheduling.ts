/**
 * A schedule as an orchestrator asks for it: once at a time, every interval (`every_seconds`, or `every` such as
 * `"2 hours"`), or a five-field cron expression in an IANA time zone. Core validates it and stores its canonical form.
 * @beta
 */
export type ScheduleRequest =
  | { kind: 'once'; run_at: string; time_zone?: string }
  | { kind: 'interval'; every_seconds?: number; every?: string; start_at?: string }
  | { kind: 'cron'; expression: string; time_zone?: string };

/** A scheduled task of the turn's session, as the scheduling handle shows it. @beta */
export interface ScheduledTaskSummary {
  task_id: string;
  /** The canonical schedule core stored: times in UTC, a cron expression re-written from its fields. */
  schedule: Readonly<Record<string, unknown>> & { kind: ScheduleRequest['kind'] };
  /** What the agent is told at each due time. */
  message: string;
  /** The next due time (ISO 8601, UTC); null once the task has no more runs. */
  next_run_at: string | null;
  status: 'active' | 'completed' | 'cancelled';
}

/**
 * What became of a scheduling request: done, or refused by core's policy with the reason a user can read (a time in
 * the past, an interval under the minimum, too many tasks, an anonymous session where scheduling is off...).
 * @beta
 */
export type SchedulingOutcome = { status: 'done'; task: ScheduledTaskSummary } | { status: 'refused'; reason: string };

/**
 * Scheduled tasks bound to the turn's agent and session (spec 4.6: made, listed and cancelled by the orchestrator's
 * scheduler stage). Core enforces every limit and policy and records each use in the turn's trace; a refusal is an
 * outcome, never a throw. A task runs later as a turn of this session, with `message` as a `rule` message.
 * @beta
 */
export interface SchedulingHandle {
  /** Whether this turn may schedule at all; `create` is refused with `unavailable_reason` when not. */
  readonly available: boolean;
  readonly unavailable_reason: string | null;
  /** The user's IANA time zone when known, else the host's default (`[scheduled_tasks] default_time_zone`). */
  readonly time_zone: string;
  create(request: { schedule: ScheduleRequest; message: string; conflict_policy?: 'skip' | 'defer' }): Promise<SchedulingOutcome>;
  /** The session's tasks that are still active, next due first. */
  list(): Promise<ScheduledTaskSummary[]>;
  /** Cancels one of the session's tasks; another session's task is refused as if it did not exist. */
  cancel(taskId: string): Promise<SchedulingOutcome>;
}
