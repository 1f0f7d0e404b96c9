import type { JobScheduler, Logger } from '@agent-host/sdk';
import type { HostConfig } from '../config/schema.js';
import { executeRun, type RunExecutionDeps } from './execute-run.js';
import type { FusionRunRow, FusionRunStore } from './run-store.js';

const DISPATCH_JOB = 'dispatch';
const DISPATCH_LOCK_MS = 10_000;

/**
 * Executes Fusion runs under a lease. A run made on an instance with room is claimed when it is stored and starts at
 * once; the rest are queued for the dispatcher job (every `[fusion] supervisor_interval_seconds`, and at once when a
 * run is queued), which also turns runs whose worker stopped into `recovering` and claims them again. Each attempt
 * holds its own lease token and renews it by a heartbeat; only the holder of the token may end the run, so a run
 * recovered elsewhere is finished once.
 */
export class FusionRunWorker {
  private jobs?: JobScheduler;
  private readonly active = new Map<string, { controller: AbortController; done: Promise<FusionRunRow | undefined> }>();
  private stopping = false;

  constructor(
    private readonly store: FusionRunStore,
    private readonly config: HostConfig['fusion'],
    private readonly execution: RunExecutionDeps,
    private readonly instanceId: string,
    private readonly logger: Logger,
  ) {}

  async start(jobs: JobScheduler): Promise<void> {
    if (!this.config.enabled) {
      this.logger.info('[fusion] enabled = false: this instance executes no Fusion run; runs made here wait for another instance');
      return;
    }
    this.jobs = jobs;
    jobs.define(DISPATCH_JOB, () => this.dispatch(), { lockLifetimeMs: DISPATCH_LOCK_MS, concurrency: 1 });
    await jobs.every(`${this.config.supervisor_interval_seconds} seconds`, DISPATCH_JOB, {});
  }

  /** Stops claiming; attempts in progress here stop, store nothing, and are recovered by another instance. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const { controller } of this.active.values()) controller.abort(new Error('the host is stopping'));
    await Promise.all([...this.active.values()].map(({ done }) => done));
  }

  /** The lease a run made now should be stored under, when this instance can start it at once; else null (queue it). */
  claimFor(): { owner: string; leaseSeconds: number } | null {
    const room = this.jobs !== undefined && !this.stopping && this.active.size < this.config.runs_per_instance;
    return room ? { owner: this.instanceId, leaseSeconds: this.config.run_lease_seconds } : null;
  }

  /** Starts a run this instance claimed; resolves when its attempt has ended here, with the ended run if it ended it. */
  begin(run: FusionRunRow): Promise<FusionRunRow | undefined> {
    const controller = new AbortController();
    const done = this.execute(run, controller)
      .catch((error: unknown) => {
        this.logger.error({ err: error, run_id: run.id }, 'a Fusion run failed unexpectedly');
        return undefined;
      })
      .finally(() => this.active.delete(run.id));
    this.active.set(run.id, { controller, done });
    return done;
  }

  /** The attempt of `runId` running here, if any. */
  running(runId: string): Promise<FusionRunRow | undefined> | undefined {
    return this.active.get(runId)?.done;
  }

  async kick(): Promise<void> {
    if (this.jobs) await this.jobs.now(DISPATCH_JOB, {});
  }

  async dispatch(): Promise<void> {
    await this.store.recover(this.config.max_attempts);
    while (!this.stopping && this.active.size < this.config.runs_per_instance) {
      const run = await this.store.claim(this.instanceId, this.config.run_lease_seconds);
      if (!run) return;
      void this.begin(run);
    }
  }

  private async execute(run: FusionRunRow, controller: AbortController): Promise<FusionRunRow | undefined> {
    const token = run.lease_token!;
    const heartbeat = setInterval(
      () =>
        void this.store.heartbeat(run.id, token, this.config.run_lease_seconds).then(
          (held) => held || controller.abort(new Error('the run was recovered by another worker')),
          (error: unknown) => this.logger.warn({ err: error, run_id: run.id }, 'Fusion run heartbeat failed'),
        ),
      (this.config.run_lease_seconds * 1000) / 3,
    );
    try {
      const outcome = await executeRun(run, this.execution, controller.signal).catch((error: unknown) => {
        if (controller.signal.aborted) return undefined;
        throw error;
      });
      // Stopped here (the host stops, or the run went to another worker): the next claim runs it again.
      if (!outcome || controller.signal.aborted) return undefined;
      const ended = await this.store.finish(run.id, token, outcome);
      if (!ended) this.logger.warn({ run_id: run.id }, 'a Fusion run ended after another worker took it over');
      return ended;
    } finally {
      clearInterval(heartbeat);
    }
  }
}
