import type { ErrorCode, JobScheduler, Logger } from '@agent-host/sdk';
import { issueSessionId, type AdmittedTurn, type ChatRequest, type StreamEvent, type TurnCaller } from '../chat/turn/turn-request.js';
import { SHORT_JOB_LOCK_MS } from '../jobs/short-lock.js';
import { nextRunAfter } from './schedule.js';
import type { ClaimedRun, RunStatus, ScheduledTaskStore, TaskRow } from './scheduled-task-store.js';

export const DUE_JOB = 'due';
export const RUN_JOB = 'run';
export const SUPERVISOR_JOB = 'supervisor';
/** Claims of one run before the supervisor gives up on it. */
const MAX_ATTEMPTS = 3;
/** A due time not fired this long after it passed was lost (its Agenda job gone): the supervisor fires it. */
const OVERDUE_LAG_SECONDS = 30;
/** Due times are armed in slots this wide: one Agenda job per slot fires every task due by its end. */
const SLOT_MS = 100;
/** A slot this close is armed even if this instance armed it before: its job may have run already. */
const SLOT_REARM_MS = 1_000;
/** Runs one instance works on at once, fired from due times and recovered or released (as Agenda jobs) each. */
const CONCURRENCY = 16;

export interface TaskRunnerOptions {
  /** `[scheduled_tasks] enabled`: whether this instance claims due tasks. Tasks are armed either way. */
  enabled: boolean;
  instanceId: string;
  leaseSeconds: number;
  supervisorIntervalSeconds: number;
}

/** What a run needs of the chat pipeline (`ChatService`): admit a turn, then run it. */
export interface TurnPipeline {
  admit(request: ChatRequest, caller: TurnCaller): Promise<AdmittedTurn>;
  stream(admitted: AdmittedTurn, signal: AbortSignal): AsyncGenerator<StreamEvent, void, void>;
}

interface DueData {
  /** The end of the slot: the job fires the tasks due by then (or by now, when later). */
  slot: string;
}

/**
 * Runs scheduled tasks on Agenda. Due times are armed as one Agenda job per {@link SLOT_MS} slot; firing a slot
 * claims the tasks due by then in batches (one statement records their runs, under this instance's lease, and moves
 * their next due times, counted from now, so a host that was down runs a missed schedule once), as many as this
 * instance has room for, and runs them here, each as a chat turn of its session through the chat pipeline, under a
 * lease renewed by a heartbeat. A slot's job ends once the due tasks that fit are fired; while more wait, each half of
 * the room freed fires the next batch. The supervisor recovers runs whose worker stopped, starts deferred runs whose
 * blocker ended, and fires due times whose job was lost.
 */
export class TaskRunner {
  private jobs?: JobScheduler;
  /** Slots this instance armed a job for, so the tasks due in one arm it once; past ones are dropped once a second. */
  private readonly armed = new Set<number>();
  private prunedAt = 0;
  /** Runs fired here and working. */
  private readonly active = new Set<Promise<void>>();
  /** The latest slot end a job asked to fire, and the sweep in progress. */
  private dueBy = 0;
  private sweeping?: Promise<void>;
  private sweepAgain = false;
  /** The last sweep filled the room: more tasks may be due. */
  private backlog = false;
  private stopping = false;

  constructor(
    private readonly store: ScheduledTaskStore,
    private readonly chat: TurnPipeline,
    private readonly options: TaskRunnerOptions,
    private readonly logger: Logger,
  ) {}

  async start(jobs: JobScheduler): Promise<void> {
    this.jobs = jobs;
    if (!this.options.enabled) {
      this.logger.info('[scheduled_tasks] enabled = false: this instance runs no scheduled task; tasks and runs stay readable');
      return;
    }
    // A due time and a run each keep their own record (the task's next_run_at, the run's row): the Agenda job of one
    // is deleted once it succeeds, so the job store does not grow by a row per due time.
    const options = { lockLifetimeMs: this.options.leaseSeconds * 1000, concurrency: CONCURRENCY, removeOnComplete: true };
    jobs.define<DueData>(DUE_JOB, (job) => this.fireDue(job.data), options);
    jobs.define<{ run_id: string }>(RUN_JOB, (job) => this.execute(job.data.run_id), options);
    jobs.define(SUPERVISOR_JOB, () => this.supervise(), { lockLifetimeMs: SHORT_JOB_LOCK_MS, concurrency: 1 });
    await jobs.every(`${this.options.supervisorIntervalSeconds} seconds`, SUPERVISOR_JOB, {});
  }

  /** Hands the task's next due time to Agenda, as the slot it falls in. */
  async arm(task: TaskRow): Promise<void> {
    if (task.status !== 'active' || !task.next_run_at) return;
    const slot = Math.ceil(task.next_run_at.getTime() / SLOT_MS) * SLOT_MS;
    const now = Date.now();
    if (now - this.prunedAt > 1_000) {
      this.prunedAt = now;
      for (const past of this.armed) if (past < now) this.armed.delete(past);
    }
    if (this.armed.has(slot) && slot > now + SLOT_REARM_MS) return;
    this.armed.add(slot);
    try {
      await this.requireJobs().schedule(new Date(slot), DUE_JOB, { slot: new Date(slot).toISOString() } satisfies DueData);
    } catch (error) {
      this.armed.delete(slot);
      throw error;
    }
  }

  /** A slot's job: fires the tasks due by the slot's end (or by now, when later) into the room this instance has. */
  fireDue(data: DueData): Promise<void> {
    this.dueBy = Math.max(this.dueBy, Date.parse(data.slot) || 0);
    return this.sweep();
  }

  /** Fires due tasks into the room; a sweep asked for while one is in progress runs after it. */
  private sweep(): Promise<void> {
    if (this.sweeping) {
      this.sweepAgain = true;
      return this.sweeping;
    }
    const sweeping = (async () => {
      try {
        do {
          this.sweepAgain = false;
          await this.fireIntoRoom();
        } while (this.sweepAgain && !this.stopping);
      } finally {
        this.sweeping = undefined;
      }
    })();
    this.sweeping = sweeping;
    return sweeping;
  }

  private async fireIntoRoom(): Promise<void> {
    const { instanceId: owner, leaseSeconds } = this.options;
    while (!this.stopping) {
      const room = CONCURRENCY - this.active.size;
      if (room <= 0) {
        this.backlog = true;
        return;
      }
      const now = Date.now();
      // The next due time is counted from the one fired when a job fires a moment early, so it is never fired twice.
      const fired = await this.store.fireDue(new Date(Math.max(now, this.dueBy)), room, { owner, leaseSeconds, newSessionId: issueSessionId }, (task) =>
        nextRunAfter(task.schedule_payload, new Date(Math.max(now, task.next_run_at!.getTime()))),
      );
      for (const run of fired.started) this.begin(run);
      for (const task of fired.tasks) {
        // A next due time left unarmed is fired by the supervisor's sweep.
        await this.arm(task).catch((error: unknown) => this.logger.warn({ err: error, task_id: task.id }, 'the next due time was not armed'));
      }
      this.backlog = fired.tasks.length === room;
      if (!this.backlog) return;
    }
  }

  /** Starts a run fired here; while due tasks wait for room, half the room freed fires the next batch. */
  private begin(run: ClaimedRun): void {
    const ended = this.work(run, run.task.target_mode === 'new_session')
      .catch((error: unknown) =>
        this.logger.error({ err: error, scheduled_run_id: run.id }, 'a scheduled run was not ended; the supervisor recovers it when its lease lapses'),
      )
      .finally(() => {
        this.active.delete(ended);
        // A sweep in progress sees this room, or leaves the backlog for the runs ending after it.
        if (this.backlog && !this.sweeping && !this.stopping && this.active.size <= CONCURRENCY / 2) {
          this.sweep().catch((error: unknown) => this.logger.error({ err: error }, 'firing due scheduled tasks failed; the supervisor fires them'));
        }
      });
    this.active.add(ended);
  }

  /** Fires nothing more, and waits up to `waitMs` for the runs working here to end (a run cut short is recovered). */
  async stop(waitMs: number): Promise<void> {
    this.stopping = true;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.all([...this.active, this.sweeping]), waited]).finally(() => clearTimeout(timer));
  }

  /** Runs a recovered or released run if this instance can claim it. */
  async execute(runId: string): Promise<void> {
    const newSessionId = issueSessionId();
    const run = await this.store.claim(runId, this.options.instanceId, this.options.leaseSeconds, newSessionId);
    // A session this claim named is new to everyone: the turn joins its line as it creates it, with no one to wait for.
    if (run) await this.work(run, run.session_id === newSessionId);
  }

  /** Runs a run this instance claimed, renewing its lease, and ends it. */
  private async work(run: ClaimedRun, issuedSession: boolean): Promise<void> {
    const { instanceId, leaseSeconds } = this.options;
    const log = this.logger.child({ scheduled_run_id: run.id, task_id: run.task_id, attempt: run.attempt_count });
    const timer = setInterval(
      () => void this.store.renew(run.id, instanceId, leaseSeconds).catch((error: unknown) => log.warn({ err: error }, 'heartbeat failed')),
      (leaseSeconds * 1000) / 3,
    );
    let end: { status: RunStatus; reason: string | null; turnId?: string | null };
    try {
      end = await this.runTurn(run, issuedSession);
    } catch (error) {
      log.error({ err: error }, 'scheduled run failed');
      end = { status: 'failed', reason: (error as Error).message };
    } finally {
      clearInterval(timer);
    }
    const released = await this.store.finish(run, instanceId, end);
    log.debug({ status: end.status }, 'scheduled run ended');
    await this.startReleased(released);
  }

  private async runTurn(
    { task, session_id: sessionId }: ClaimedRun,
    issuedSession: boolean,
  ): Promise<{ status: RunStatus; reason: string | null; turnId?: string | null }> {
    if (task.status === 'cancelled') return { status: 'cancelled', reason: 'the task was cancelled before this run started' };
    const takenOver = { status: 'deferred' as const, reason: 'the session is under human takeover; the run starts when the takeover ends' };
    if (task.target_mode === 'origin_session' && (await this.store.takenOver(sessionId!))) return takenOver;
    const admitted = await this.chat.admit(
      { thread_id: sessionId!, agent_id: task.agent_id, message: task.payload.message, message_type: 'rule' },
      { principal: undefined, callerKey: task.caller_key, channel: 'scheduled', issuedSession },
    );
    let failure: { code: ErrorCode; content: string } | undefined;
    let turnId: string | undefined;
    // The heartbeat keeps the lease of a run whose turn hangs: the turn is given as long as three leases, then stopped.
    for await (const event of this.chat.stream(admitted, AbortSignal.timeout(this.options.leaseSeconds * 1000 * MAX_ATTEMPTS))) {
      if (event.type === 'error') failure ??= event;
      else if (event.type === 'done') turnId = event.turn_id;
    }
    // No turn and no error: a takeover began between the check above and the turn.
    if (!turnId && !failure) return takenOver;
    return failure ? { status: 'failed', reason: `${failure.code}: ${failure.content}`, turnId } : { status: 'succeeded', reason: null, turnId };
  }

  /** Recovers runs whose worker stopped, starts deferred runs whose blocker ended, fires lost due times. */
  async supervise(): Promise<void> {
    const recovered = await this.store.expireLeases(MAX_ATTEMPTS);
    if (recovered.length) this.logger.warn({ runs: recovered }, 'scheduled runs whose worker stopped are started again');
    await this.startReleased(recovered);
    await this.startReleased(await this.store.releaseDeferred());
    if (await this.store.hasOverdue(OVERDUE_LAG_SECONDS)) await this.sweep();
  }

  private async startReleased(runIds: string[]): Promise<void> {
    for (const runId of runIds) await this.requireJobs().now(RUN_JOB, { run_id: runId });
  }

  private requireJobs(): JobScheduler {
    if (!this.jobs) throw new Error('the scheduled task runner has not started');
    return this.jobs;
  }
}
