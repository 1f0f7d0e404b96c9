/** The job a handler runs, with its data and progress reporting. @public */
export interface JobRun<D> {
  readonly id: string;
  readonly name: string;
  readonly data: D;
  /** Extends the job's lock so long work is not taken over by another worker. */
  touch(progress?: number): Promise<void>;
}

/** Options of a job definition. @public */
export interface JobDefinitionOptions {
  /** Parallel runs of this job per host process. */
  concurrency?: number;
  /** How long a lock is held before another worker may retake the job, ms. */
  lockLifetimeMs?: number;
  /**
   * Delete a one-off run of this job once it succeeds (failed runs stay): for jobs that keep their own record, so
   * the job store does not grow with every run.
   */
  removeOnComplete?: boolean;
}

/**
 * Background jobs (Agenda). Names a plugin defines are namespaced with its
 * plugin id by the kernel, so plugins cannot collide. A job runs on exactly
 * one worker across host instances.
 * @public
 */
export interface JobScheduler {
  /** Defines the handler of a job name. Call from `init`. */
  define<D>(name: string, handler: (job: JobRun<D>) => Promise<void>, options?: JobDefinitionOptions): void;
  /** Queues one run now; resolves with the job id. */
  now<D>(name: string, data: D): Promise<string>;
  /** Queues one run at `when` (a Date or a human interval such as `in 5 minutes`). */
  schedule<D>(when: Date | string, name: string, data: D): Promise<string>;
  /** Repeats a job at an interval (`5 minutes`) or cron expression; one schedule per job name, replaced on each call. */
  every<D>(interval: string, name: string, data: D): Promise<string>;
  /** Cancels queued runs of `name` (optionally only those whose data matches); resolves with how many. */
  cancel(name: string, data?: Record<string, unknown>): Promise<number>;
}
