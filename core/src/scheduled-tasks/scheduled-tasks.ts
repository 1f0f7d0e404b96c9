import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError, type JobScheduler, type Logger } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { auditOperation, type Operation } from '../admin/operation.js';
import type { Agents } from '../agents/agents.js';
import type { HostConfig } from '../config/schema.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';
import { normalizeSchedule, SCHEDULE_KINDS, scheduleInputSchema } from './schedule.js';
import { ScheduledTaskStore, type ConflictPolicy, type RunWithUsage, type TargetMode, type TaskFilters, type TaskRow } from './scheduled-task-store.js';
import { TaskRunner, type TurnPipeline } from './task-runner.js';

export const TARGET_MODES = ['origin_session', 'new_session'] as const satisfies readonly TargetMode[];
export const CONFLICT_POLICIES = ['skip', 'defer'] as const satisfies readonly ConflictPolicy[];
export const TASK_STATUSES = ['active', 'completed', 'cancelled'] as const;
/** Spec 3.6: `heartbeat_expired` is a running run whose lease lapsed; the others are stored as they are. */
export const EXECUTION_STATES = ['queued', 'recovering', 'running', 'heartbeat_expired', 'succeeded', 'failed', 'deferred', 'cancelled'] as const;

/** `POST /scheduled-tasks`: an administrator schedules a task on a chat agent, optionally in one of its sessions. */
export const createTaskSchema = z
  .object({
    agent_id: z.string().uuid(),
    /** The session the replies go to (`target_mode=origin_session`, the default when given). */
    session_id: z.string().trim().min(1).max(200).optional(),
    schedule_payload: scheduleInputSchema,
    /** `message`: what the agent is told at each due time, as a message of `message_type=rule`. */
    payload: z.object({ message: z.string().trim().min(1) }).strict(),
    target_mode: z.enum(TARGET_MODES).optional(),
    conflict_policy: z.enum(CONFLICT_POLICIES).default('skip'),
  })
  .strict();
export type CreateTaskInput = z.output<typeof createTaskSchema>;

export const taskFiltersSchema = z
  .object({
    agent_id: z.string().uuid().optional(),
    session_id: z.string().min(1).max(200).optional(),
    status: z.enum(TASK_STATUSES).optional(),
    target_mode: z.enum(TARGET_MODES).optional(),
    schedule_kind: z.enum(SCHEDULE_KINDS).optional(),
  })
  .strict();

/** Who a task is made for: the REST caller, or (from a chat) the caller of the turn. */
export interface TaskOrigin {
  via: 'api' | 'chat';
  adminUserId: string | null;
  callerKey: string | null;
}

const NO_MODEL: TokenUsageSummary = { input_tokens: 0, output_tokens: 0, total_tokens: 0, token_usage_source: 'no_model_invocation' };

export function presentTask(row: TaskRow) {
  return {
    task_id: row.id,
    agent_id: row.agent_id,
    session_id: row.session_id,
    schedule_kind: row.schedule_kind,
    schedule_payload: row.schedule_payload,
    payload: row.payload,
    target_mode: row.target_mode,
    conflict_policy: row.conflict_policy,
    status: row.status,
    next_run_at: row.next_run_at?.toISOString() ?? null,
    created_via: row.created_via,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    cancelled_at: row.cancelled_at?.toISOString() ?? null,
  };
}

function presentRun(row: RunWithUsage) {
  return {
    run_id: row.id,
    task_id: row.task_id,
    due_at: row.due_at.toISOString(),
    execution_state: row.lease_lapsed ? ('heartbeat_expired' as const) : row.status,
    heartbeat_stale: row.heartbeat_stale,
    reason: row.reason,
    session_id: row.session_id,
    turn_id: row.turn_id,
    attempt_count: row.attempt_count,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    completed_at: row.completed_at?.toISOString() ?? null,
    worker_heartbeat_at: row.worker_heartbeat_at?.toISOString() ?? null,
    // Spec 2.5: read from the run's turn; a run that produced none invoked no model.
    derived_generation_usage:
      row.token_usage_source === null
        ? NO_MODEL
        : { input_tokens: row.input_tokens!, output_tokens: row.output_tokens!, total_tokens: row.total_tokens!, token_usage_source: row.token_usage_source },
  };
}

/**
 * Scheduled tasks (spec 4.6): made over REST by administrators or in a chat by the scheduler stage, read and
 * cancelled over REST, run by the {@link TaskRunner} once `start` has handed it the job scheduler.
 */
export class ScheduledTasks {
  readonly store: ScheduledTaskStore;
  private runner?: TaskRunner;

  constructor(
    private readonly db: Sequelize,
    private readonly config: HostConfig,
    private readonly agents: Agents,
    private readonly instanceId: string,
    private readonly logger: Logger,
  ) {
    this.store = new ScheduledTaskStore(db);
    agents.addTypeChangeCheck(async (agentId, from, to) => {
      if (from !== 'chat' || to === 'chat') return undefined;
      const { agent } = await this.store.countActive(agentId, null);
      return agent > 0 ? `the agent has ${agent} active scheduled tasks; cancel them first` : undefined;
    });
  }

  /** Whether anonymous chats may schedule (`[scheduled_tasks] allow_anonymous`). */
  get allowAnonymous(): boolean {
    return this.config.scheduled_tasks.allow_anonymous;
  }

  /** The time zone a chat's schedules are read in when the user's is not known. */
  get defaultTimeZone(): string {
    return this.config.scheduled_tasks.default_time_zone;
  }

  /**
   * Runs tasks from here on, through the chat pipeline (which holds this domain for its scheduling handles, so the
   * runner gets it only now).
   */
  start(jobs: JobScheduler, chat: TurnPipeline): Promise<void> {
    const { enabled, run_lease_seconds: leaseSeconds, supervisor_interval_seconds: supervisorIntervalSeconds } = this.config.scheduled_tasks;
    this.runner = new TaskRunner(this.store, chat, { enabled, instanceId: this.instanceId, leaseSeconds, supervisorIntervalSeconds }, this.logger);
    return this.runner.start(jobs);
  }

  /** Fires no more due times, and waits up to half the shutdown timeout for the runs working here to end. */
  async stop(): Promise<void> {
    await this.runner?.stop((this.config.server.shutdown_timeout_seconds * 1000) / 2);
  }

  /** `POST /scheduled-tasks`. */
  async create(input: CreateTaskInput, op: Operation) {
    const task = await this.schedule(
      input,
      { via: 'api', adminUserId: op.operator.admin_user_id, callerKey: `admin:${op.operator.admin_user_id}` },
      ['body'],
      op,
    );
    return presentTask(task);
  }

  /**
   * Validates and stores a task, then arms its first due time. Refusals name the field under `loc` (the body over
   * REST; the scheduler stage's own path in chat). With `op`, the creation is audited with it.
   */
  async schedule(input: CreateTaskInput, origin: TaskOrigin, loc: string[], op?: Operation): Promise<TaskRow> {
    const { scheduled_tasks: limits, agent: agentConfig } = this.config;
    const field = (name: string, msg: string, type = 'value_error') => new ValidationError([{ loc: [...loc, name], msg, type }]);
    const agent = await this.agents.get(input.agent_id).catch((error: unknown) => {
      throw error instanceof NotFoundError ? field('agent_id', `agent ${input.agent_id} does not exist`, 'not_found') : error;
    });
    if (agent.agent_type !== 'chat') throw field('agent_id', `agent ${input.agent_id} is a ${agent.agent_type} agent; tasks run on chat agents`);
    if (input.payload.message.length > agentConfig.message_max_length) {
      throw field('payload', `the message is ${input.payload.message.length} characters; the limit is ${agentConfig.message_max_length}`, 'too_long');
    }
    const targetMode = input.target_mode ?? (input.session_id ? 'origin_session' : 'new_session');
    if (input.session_id !== undefined) {
      const owner = await this.store.sessionAgent(input.session_id);
      if (owner === undefined) throw field('session_id', `session ${input.session_id} does not exist`, 'not_found');
      if (owner !== input.agent_id) throw field('session_id', `session ${input.session_id} belongs to another agent`);
    } else if (targetMode === 'origin_session') {
      throw field('session_id', 'target_mode=origin_session needs the session_id the replies go to', 'missing');
    }
    const now = new Date();
    const { schedule, firstRunAt } = normalizeSchedule(input.schedule_payload, now, limits, [...loc, 'schedule_payload']);
    const id = randomUUID();
    const task = await this.store.transaction(async (transaction) => {
      await this.store.lockAgent(input.agent_id, transaction);
      const active = await this.store.countActive(input.agent_id, input.session_id ?? null, transaction);
      if (input.session_id !== undefined && active.session >= limits.max_active_per_session) {
        throw new ConflictError(`session ${input.session_id} has ${active.session} active tasks, the most [scheduled_tasks] max_active_per_session allows`, {
          code: 'SCHEDULED_TASK_LIMIT',
        });
      }
      if (active.agent >= limits.max_active_per_agent) {
        throw new ConflictError(`agent ${input.agent_id} has ${active.agent} active tasks, the most [scheduled_tasks] max_active_per_agent allows`, {
          code: 'SCHEDULED_TASK_LIMIT',
        });
      }
      const row = await this.store.insert(
        {
          id,
          agent_id: input.agent_id,
          session_id: input.session_id ?? null,
          schedule_kind: schedule.kind,
          schedule_payload: schedule,
          payload: { message: input.payload.message },
          target_mode: targetMode,
          conflict_policy: input.conflict_policy,
          next_run_at: firstRunAt,
          created_via: origin.via,
          created_by: origin.adminUserId,
          caller_key: origin.callerKey,
        },
        transaction,
      );
      if (op) {
        await auditOperation(
          this.db,
          'core.scheduled_tasks',
          op,
          { action: 'scheduled_task.create', target_type: 'scheduled_task', target_id: id, payload: { agent_id: input.agent_id, schedule } },
          transaction,
        );
      }
      return row;
    });
    if (!this.runner) throw new Error('scheduled tasks have not started');
    await this.runner.arm(task);
    return task;
  }

  async list(filters: TaskFilters, page: { limit: number; cursor?: string }) {
    return this.store.page(filters, page, presentTask);
  }

  async get(taskId: string) {
    return presentTask(await this.find(taskId));
  }

  async runs(taskId: string, page: { limit: number; cursor?: string }) {
    await this.find(taskId);
    // Heartbeats come every third of the lease: two missed ones make a run stale before its lease lapses.
    return this.store.runsPage(taskId, (this.config.scheduled_tasks.run_lease_seconds * 2) / 3, page, presentRun);
  }

  /** `POST /scheduled-tasks/{task_id}/cancel`: the task stops, its runs stay. With `op`, audited. */
  async cancel(taskId: string, op?: Operation) {
    const current = await this.find(taskId);
    const cancelled = await this.store.cancel(current.id);
    if (!cancelled)
      throw new ConflictError(`scheduled task ${taskId} is ${current.status}; only an active task is cancelled`, { code: 'SCHEDULED_TASK_NOT_ACTIVE' });
    if (op) {
      await auditOperation(this.db, 'core.scheduled_tasks', op, { action: 'scheduled_task.cancel', target_type: 'scheduled_task', target_id: current.id });
    }
    return presentTask(cancelled);
  }

  async find(taskId: string): Promise<TaskRow> {
    const row = await this.store.find(taskId);
    if (!row) throw new NotFoundError(`scheduled task ${taskId} not found`, { code: 'SCHEDULED_TASK_NOT_FOUND' });
    return row;
  }
}
