import { PluginRefusedError, type JobDefinitionOptions, type JobRun, type JobScheduler, type Logger } from '@agent-host/sdk';
import type { Agenda, Job } from 'agenda';
import { parseInterval, resolveWhen } from './interval.js';

/**
 * The SDK's job scheduler over one Agenda instance. Each plugin gets a view
 * whose job names are prefixed `<pluginId>:`, so definitions cannot collide.
 */
export class AgendaJobs {
  private readonly owners = new Map<string, string>();

  constructor(
    readonly agenda: Agenda,
    private readonly logger: Logger,
  ) {}

  /** The scheduler a plugin (or core domain) sees. */
  forOwner(owner: string): JobScheduler {
    const qualified = (name: string) => `${owner}:${name}`;
    const id = (job: Job<unknown>) => String(job.attrs._id);
    return {
      define: <D>(name: string, handler: (job: JobRun<D>) => Promise<void>, options?: JobDefinitionOptions) => {
        const full = qualified(name);
        const existing = this.owners.get(full);
        if (existing) throw new PluginRefusedError(owner, 'duplicate_key', `job "${name}" is already defined by "${existing}"`);
        this.owners.set(full, owner);
        this.agenda.define<D>(
          full,
          async (job) => {
            const started = Date.now();
            const log = this.logger.child({ job: full, job_id: id(job as Job<unknown>) });
            // Periodic jobs run every few seconds: their start and end are debug lines; what a job does it logs itself.
            log.debug('job started');
            try {
              await handler({ id: id(job as Job<unknown>), name, data: job.attrs.data, touch: (progress) => job.touch(progress) });
              log.debug({ ms: Date.now() - started }, 'job finished');
            } catch (error) {
              log.error({ err: error, ms: Date.now() - started }, 'job failed');
              throw error;
            }
          },
          {
            ...(options?.concurrency !== undefined && { concurrency: options.concurrency }),
            ...(options?.lockLifetimeMs !== undefined && { lockLifetime: options.lockLifetimeMs }),
            ...(options?.removeOnComplete !== undefined && { removeOnComplete: options.removeOnComplete }),
          },
        );
      },
      now: async (name, data) => id((await this.agenda.now(qualified(name), data)) as Job<unknown>),
      // Agenda misreads millisecond intervals; the host hands it dates and numbers (see parseInterval).
      schedule: async (when, name, data) => id((await this.agenda.schedule(resolveWhen(when), qualified(name), data)) as Job<unknown>),
      every: async (interval, name, data) => id((await this.agenda.every(parseInterval(interval) ?? interval, qualified(name), data)) as Job<unknown>),
      cancel: (name, data) => this.agenda.cancel({ name: qualified(name), ...(data !== undefined && { data }) }),
    };
  }
}
