import { Agenda, type AgendaBackend, type AgendaOptions, type DrainOptions, type DrainResult, type Job } from 'agenda';

interface ProcessorInternals {
  lockedJobs?: Job[];
  runningJobs?: Job[];
}

/**
 * Agenda with two repairs the host relies on:
 *
 * - A failed backend connection (unreachable MongoDB, no right to create
 *   `agenda_jobs`...) rejects `ready`, so `start()`, `now()`... reject and the
 *   failure is emitted as `error`. Plain Agenda leaves the rejection of
 *   `backend.connect()` unhandled (the process dies) and `ready` pending forever.
 * - `drain()` also releases the jobs this worker had locked but not started
 *   (queued behind its concurrency limit). Plain Agenda leaves them locked until
 *   their lock lifetime (10 minutes by default) expires, so no other host
 *   instance can run them meanwhile (and `stop()` after `drain()` does nothing).
 */
export class HostAgenda extends Agenda {
  private readonly jobBackend: AgendaBackend;

  constructor(config: AgendaOptions) {
    let connectFailed!: (error: unknown) => void;
    const failure = new Promise<never>((_, reject) => {
      connectFailed = reject;
    });
    failure.catch(() => undefined);
    const backend = config.backend;
    const connect = backend.connect.bind(backend);
    // Agenda calls connect() without handling its rejection; keep the failure for `ready`.
    backend.connect = () =>
      connect().catch((error: unknown) => {
        connectFailed(error);
        return new Promise<void>(() => undefined);
      });
    super(config);
    this.jobBackend = backend;
    failure.catch((error: unknown) => {
      this.emit('error', error instanceof Error ? error : new Error(String(error)));
    });
    const ready = Promise.race([this.ready, failure]);
    ready.catch(() => undefined);
    (this as { ready: Promise<void> }).ready = ready;
  }

  override async drain(options?: number | DrainOptions): Promise<DrainResult> {
    const processor = (this as unknown as { jobProcessor?: ProcessorInternals }).jobProcessor;
    const opts = (typeof options === 'number' ? { timeout: options } : { ...options }) as DrainOptions & { closeConnection?: boolean };
    const closeConnection = opts.closeConnection ?? this.jobBackend.ownsConnection ?? true;
    const result = await super.drain({ ...opts, closeConnection: false } as DrainOptions);
    if (processor) {
      const running = new Set((processor.runningJobs ?? []).map((job) => String(job.attrs._id)));
      const notStarted = (processor.lockedJobs ?? []).filter((job) => job.attrs._id !== undefined && !running.has(String(job.attrs._id)));
      if (notStarted.length) {
        try {
          await this.db.unlockJobs(notStarted.map((job) => job.attrs._id!));
        } catch (error) {
          this.emit('error', error instanceof Error ? error : new Error(String(error)));
        }
      }
    }
    if (closeConnection) await this.jobBackend.disconnect();
    return result;
  }
}
