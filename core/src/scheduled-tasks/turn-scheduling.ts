import { AgentHostError, ValidationError, type ScheduledTaskSummary, type SchedulingHandle, type SchedulingOutcome, type Trace } from '@agent-host/sdk';
import type { TurnCaller } from '../chat/turn/turn-request.js';
import { scheduleInputSchema } from './schedule.js';
import type { TaskRow } from './scheduled-task-store.js';
import type { ScheduledTasks } from './scheduled-tasks.js';

/** What a turn's scheduling handle is bound to. */
export interface SchedulingScope {
  /** The turn's chat agent; none for a turn without one. */
  agentId: string | null;
  sessionId: string;
  caller: TurnCaller;
  trace: Trace;
  /** The caller's time zone (the request's, else the session's); null for `[scheduled_tasks] default_time_zone`. */
  timeZone: string | null;
}

const summary = (row: TaskRow): ScheduledTaskSummary => ({
  task_id: row.id,
  schedule: row.schedule_payload,
  message: row.payload.message,
  next_run_at: row.next_run_at?.toISOString() ?? null,
  status: row.status,
});

/** A refusal's words for the user: a validation issue's message, or the error's own. */
function reasonOf(error: unknown): string {
  if (error instanceof ValidationError) return error.issues.map((issue) => issue.msg).join('; ');
  if (error instanceof AgentHostError) return error.message;
  throw error;
}

/** Why this turn may not schedule, or null when it may. */
function unavailability(tasks: ScheduledTasks, scope: SchedulingScope): string | null {
  const { caller } = scope;
  if (!scope.agentId) return 'scheduling needs an agent';
  if (caller.channel === 'scheduled') return 'a scheduled run does not schedule further tasks';
  if (caller.channel === 'evaluation') return 'an evaluation run schedules nothing';
  if (caller.principal) return caller.principal.permissions.includes('scheduled_tasks.write') ? null : 'scheduling needs the scheduled_tasks.write permission';
  return tasks.allowAnonymous ? null : 'scheduling is not offered in public chats on this host';
}

/**
 * The scheduling handle of one turn (SDK `SchedulingHandle`): tasks of the turn's agent, replying into its session,
 * made for the turn's caller under core's limits. Each use is a span of the turn's trace.
 */
export function turnScheduling(tasks: ScheduledTasks, scope: SchedulingScope): SchedulingHandle {
  const unavailable = unavailability(tasks, scope);
  const { sessionId, caller, trace } = scope;
  const ownTask = async (taskId: string) => {
    const row = await tasks.store.find(taskId);
    return row && row.session_id === sessionId && row.agent_id === scope.agentId && row.status === 'active' ? row : undefined;
  };
  return {
    available: unavailable === null,
    unavailable_reason: unavailable,
    time_zone: scope.timeZone ?? tasks.defaultTimeZone,
    create: (request) =>
      trace.span('scheduled-task-create', async (attributes): Promise<SchedulingOutcome> => {
        attributes.schedule_kind = request.schedule.kind;
        const refused = (reason: string): SchedulingOutcome => {
          attributes.outcome = 'refused';
          attributes.reason = reason;
          return { status: 'refused', reason };
        };
        if (unavailable) return refused(unavailable);
        const schedule = scheduleInputSchema.safeParse(request.schedule);
        if (!schedule.success) return refused(`the schedule is not one the host takes: ${schedule.error.issues.map((i) => i.message).join('; ')}`);
        try {
          const row = await tasks.schedule(
            {
              agent_id: scope.agentId!,
              session_id: sessionId,
              schedule_payload: schedule.data,
              payload: { message: request.message },
              target_mode: 'origin_session',
              conflict_policy: request.conflict_policy ?? 'skip',
            },
            { via: 'chat', adminUserId: caller.principal?.admin_user_id ?? null, callerKey: caller.callerKey },
            ['scheduling'],
          );
          attributes.outcome = 'created';
          attributes.task_id = row.id;
          return { status: 'done', task: summary(row) };
        } catch (error) {
          return refused(reasonOf(error));
        }
      }),
    list: () =>
      trace.span('scheduled-task-list', async (attributes) => {
        const rows = await tasks.store.activeInSession(sessionId);
        attributes.task_count = rows.length;
        return rows.map(summary);
      }),
    cancel: (taskId) =>
      trace.span('scheduled-task-cancel', async (attributes): Promise<SchedulingOutcome> => {
        attributes.task_id = taskId;
        const row = await ownTask(taskId);
        const cancelled = row && (await tasks.store.cancel(row.id));
        attributes.outcome = cancelled ? 'cancelled' : 'refused';
        return cancelled ? { status: 'done', task: summary(cancelled) } : { status: 'refused', reason: `this session has no active task ${taskId}` };
      }),
  };
}
