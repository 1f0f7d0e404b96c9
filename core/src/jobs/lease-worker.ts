import type { JobScheduler, Logger } from '@agent-host/sdk';
import { SHORT_JOB_LOCK_MS } from './short-lock.js';

const DISPATCH_JOB = 'dispatch';
const SETTLE_POLL_MS = 100;

/** What a kind of leased work gives the worker: how rows are claimed, recovered, kept and worked on. */
export interface LeasedWork<Row extends { id: string; lease_token: string | null }, Ended> {
  /** Claims the next waiting row under a new lease token, or none. */
  claim(owner: string, leaseSeconds: number): Promise<Row | undefined>;
  /** Turns rows whose lease lapsed into waiting ones (or failed ones past `maxAttempts`). */
  recover(maxAttempts: number): Promise<unknown>;
  /** Renews the attempt's lease; false when the attempt no longer holds the row. */
  heartbeat(id: string, leaseToken: string, leaseSeconds: number): Promise<boolean>;
  /** One attempt at the row; resolves with the row as it ended it, or undefined when it did not end it. */
  attempt(row: Row, signal: AbortSignal): Promise<Ended | undefined>;
}

export interface LeaseWorkerOptions {
  /** Whether this instance works at all; the rows stay readable when not. */
  enabled: boolean;
  /** Rows one instance works on at once. */
  concurrency: number;
  leaseSeconds: number;
  supervisorSeconds: number;
  maxAttempts: number;
  /** What the rows are, for log lines ("Fusion run"). */
  what: string;
  instanceId: string;
  logger: Logger;
}

/**
 * Works on rows held under a lease (Fusion runs, ETL jobs). A row made on an instance with room is claimed when it is
 * stored and starts at once (`claimFor`, `begin`); the rest wait for the dispatcher job (every `supervisorSeconds`, and
 * at once on `kick`), which also recovers rows whose worker stopped and claims waiting ones. Each attempt holds its own
 * lease token and renews it by a heartbeat every third of the lease; losing it aborts the attempt, and only the
 * token's holder may end the row, so a row recovered elsewhere is ended once.
 */
export class LeaseWorker<Row extends { id: string; lease_token: string | null }, Ended> {
  private jobs?: JobScheduler;
  private readonly active = new Map<string, { controller: AbortController; done: Promise<Ended | undefined> }>();
  private stopping = false;

  constructor(
    private readonly work: LeasedWork<Row, Ended>,
    private readonly options: LeaseWorkerOptions,
  ) {}

  async start(jobs: JobScheduler): Promise<void> {
    if (!this.options.enabled) {
      this.options.logger.info(`this instance works on no ${this.options.what}; those made here wait for an instance that does`);
      return;
    }
    this.jobs = jobs;
    jobs.define(DISPATCH_JOB, () => this.dispatch(), { lockLifetimeMs: SHORT_JOB_LOCK_MS, concurrency: 1 });
    await jobs.every(`${this.options.supervisorSeconds} seconds`, DISPATCH_JOB, {});
  }

  /** Stops claiming; attempts in progress here stop, end nothing, and are recovered by another instance. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const { controller } of this.active.values()) controller.abort(new Error('the host is stopping'));
    await Promise.all([...this.active.values()].map(({ done }) => done));
  }

  /** The lease a row made now should be stored under, when this instance can start it at once; else null (it waits). */
  claimFor(): { owner: string; leaseSeconds: number } | null {
    const room = this.jobs !== undefined && !this.stopping && this.active.size < this.options.concurrency;
    return room ? { owner: this.options.instanceId, leaseSeconds: this.options.leaseSeconds } : null;
  }

  /** Starts an attempt at a row this instance claimed; resolves when it has ended here, with the row if it ended it. */
  begin(row: Row): Promise<Ended | undefined> {
    const controller = new AbortController();
    const done = this.attempt(row, controller)
      .catch((error: unknown) => {
        this.options.logger.error({ err: error, id: row.id }, `a ${this.options.what} failed unexpectedly`);
        return undefined;
      })
      .finally(() => this.active.delete(row.id));
    this.active.set(row.id, { controller, done });
    return done;
  }

  /** The attempt at `id` running here, if any. */
  running(id: string): Promise<Ended | undefined> | undefined {
    return this.active.get(id)?.done;
  }

  /**
   * Waits up to `waitMs` for `row` to end (`ended` says when), then answers it as it is: the attempt running here answers
   * the row it ended; else (elsewhere, or not ended yet) the row is read again (`reread`) every {@link SETTLE_POLL_MS}.
   */
  async settle<R extends Row>(row: R, waitMs: number, ended: (row: R) => boolean, reread: () => Promise<R | undefined>): Promise<R> {
    const deadline = Date.now() + waitMs;
    let current = row;
    while (!ended(current) && Date.now() < deadline) {
      const local = this.running(row.id) as Promise<R | undefined> | undefined;
      const left = deadline - Date.now();
      // The timer of a wait that ended first is cleared: a pending one would hold the process (and memory) until it fires.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, local ? left : Math.min(SETTLE_POLL_MS, left), undefined)));
      const done = await (local ? Promise.race([local, timeout]) : timeout).finally(() => clearTimeout(timer));
      current = done ?? (await reread()) ?? current;
    }
    return current;
  }

  /** Asks for a dispatch now (a row is waiting). */
  async kick(): Promise<void> {
    if (this.jobs) await this.jobs.now(DISPATCH_JOB, {});
  }

  async dispatch(): Promise<void> {
    await this.work.recover(this.options.maxAttempts);
    while (!this.stopping && this.active.size < this.options.concurrency) {
      const row = await this.work.claim(this.options.instanceId, this.options.leaseSeconds);
      if (!row) return;
      void this.begin(row);
    }
  }

  private async attempt(row: Row, controller: AbortController): Promise<Ended | undefined> {
    const token = row.lease_token!;
    const { leaseSeconds, logger, what } = this.options;
    const heartbeat = setInterval(
      () =>
        void this.work.heartbeat(row.id, token, leaseSeconds).then(
          (held) => held || controller.abort(new Error(`the ${what} was recovered by another worker`)),
          (error: unknown) => logger.warn({ err: error, id: row.id }, `${what} heartbeat failed`),
        ),
      (leaseSeconds * 1000) / 3,
    );
    try {
      return await this.work.attempt(row, controller.signal).catch((error: unknown) => {
        // Stopped here (the host stops, or the row went to another worker): the next claim works on it again.
        if (controller.signal.aborted) return undefined;
        throw error;
      });
    } finally {
      clearInterval(heartbeat);
    }
  }
}
