import type { ErrorCode, JobScheduler, Logger } from '@agent-host/sdk';
import { issueSessionId, type AdmittedTurn, type ChatRequest, type StreamEvent, type TurnCaller } from '../chat/turn/turn-request.js';
import { nextRunAfter } from './schedule.js';
import type { ClaimedRun, RunStatus, ScheduledTaskStore, TaskRow } from './scheduled-task-store.js';

export const DUE_JOB = 'due';
export const RUN_JOB = 'run';
export const SUPERVISOR_JOB = 'supervisor';
/** Claims of one run before the supervisor gives up on it. */
const MAX_ATTEMPTS = 3;
const SUPERVISOR_LOCK_MS = 10_000;
/** A due time not fired this long after it passed was lost (its Agenda job gone): the supervisor fires it. */
const OVERDUE_LAG_SECONDS = 30;
/** Due times one supervisor sweep fires at most; the next sweep takes the rest. */
const OVERDUE_BATCH = 500;
/** Due jobs (and the turns they run) one instance works on at once. */
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
  task_id: string;
  due_at: string;
}

/**
 * Runs scheduled tasks on Agenda. Each task's next due time is an Agenda job; firing it records the run (one per due
 * time across instances) and arms the next due time, counted from now, so a host that was down runs a missed
 * schedule once. A run executes as a chat turn of its session through the chat pipeline, under a lease renewed by a
 * heartbeat; the supervisor recovers runs whose worker stopped, starts deferred runs whose blocker ended, and fires
 * due times whose job was lost.
 */
export class TaskRunner {
  private jobs?: JobScheduler;

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
    jobs.define<DueData>(DUE_JOB, (job) => this.due(job.data, true), options);
    jobs.define<{ run_id: string }>(RUN_JOB, (job) => this.execute(job.data.run_id), options);
    jobs.define(SUPERVISOR_JOB, () => this.supervise(), { lockLifetimeMs: SUPERVISOR_LOCK_MS, concurrency: 1 });
    await jobs.every(`${this.options.supervisorIntervalSeconds} seconds`, SUPERVISOR_JOB, {});
  }

  /** Hands the task's next due time to Agenda. */
  async arm(task: TaskRow): Promise<void> {
    if (task.status !== 'active' || !task.next_run_at) return;
    await this.requireJobs().schedule(task.next_run_at, DUE_JOB, { task_id: task.id, due_at: task.next_run_at.toISOString() } satisfies DueData);
  }

  /** Fires a due time: records its run, arms the next one, and runs it here (`inline`) or as its own job. */
  async due(data: DueData, inline: boolean): Promise<void> {
    const dueAt = new Date(data.due_at);
    // Counted from the due time when Agenda fires a moment early, so the same due time is never armed again.
    const fired = await this.store.fire(data.task_id, dueAt, (task) => nextRunAfter(task.schedule_payload, new Date(Math.max(Date.now(), dueAt.getTime()))));
    if (!fired) return;
    await this.arm(fired.task);
    if (fired.fired?.status !== 'queued') return;
    if (inline) await this.execute(fired.fired.runId);
    else await this.requireJobs().now(RUN_JOB, { run_id: fired.fired.runId });
  }

  /** Runs one run if this instance can claim it. */
  async execute(runId: string): Promise<void> {
    const { instanceId, leaseSeconds } = this.options;
    const newSessionId = issueSessionId();
    const run = await this.store.claim(runId, instanceId, leaseSeconds, newSessionId);
    if (!run) return;
    const log = this.logger.child({ scheduled_run_id: run.id, task_id: run.task_id, attempt: run.attempt_count });
    const timer = setInterval(
      () => void this.store.renew(run.id, instanceId, leaseSeconds).catch((error: unknown) => log.warn({ err: error }, 'heartbeat failed')),
      (leaseSeconds * 1000) / 3,
    );
    let end: { status: RunStatus; reason: string | null; turnId?: string | null };
    try {
      // A session this claim named is new to everyone: the turn joins its line as it creates it, with no one to wait for.
      end = await this.runTurn(run, run.session_id === newSessionId);
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
    for (const task of await this.store.overdue(OVERDUE_LAG_SECONDS, OVERDUE_BATCH)) {
      await this.due({ task_id: task.id, due_at: task.next_run_at.toISOString() }, false);
    }
  }

  private async startReleased(runIds: string[]): Promise<void> {
    for (const runId of runIds) await this.requireJobs().now(RUN_JOB, { run_id: runId });
  }

  private requireJobs(): JobScheduler {
    if (!this.jobs) throw new Error('the scheduled task runner has not started');
    return this.jobs;
  }
}
