import { CONFLICT_POLICIES, EXECUTION_STATES, SCHEDULE_KINDS, TARGET_MODES, TASK_STATUSES } from '@agent-host/core';
import { z } from 'zod';
import { timestamp } from '../validation.js';
import { tokenUsageSummary } from './usage.js';

/** Scheduled tasks and runs as responses show them (spec 2.9, 3.6, 4.6), from core/src/scheduled-tasks. */

/** The canonical `schedule_payload` (docs/api-decisions.md, "Scheduled tasks"). */
const schedulePayload = z
  .discriminatedUnion('kind', [
    z.object({ kind: z.literal('once'), run_at: timestamp, time_zone: z.string().nullable() }),
    z.object({ kind: z.literal('interval'), every_seconds: z.number().int(), start_at: timestamp }),
    z.object({ kind: z.literal('cron'), expression: z.string(), time_zone: z.string() }),
  ])
  .meta({ id: 'SchedulePayload' });

export const scheduledTask = z
  .object({
    task_id: z.string().uuid(),
    agent_id: z.string().uuid(),
    session_id: z.string().nullable(),
    schedule_kind: z.enum(SCHEDULE_KINDS),
    schedule_payload: schedulePayload,
    payload: z.object({ message: z.string() }),
    target_mode: z.enum(TARGET_MODES),
    conflict_policy: z.enum(CONFLICT_POLICIES),
    status: z.enum(TASK_STATUSES),
    next_run_at: timestamp.nullable().describe('The next due time; null once the task is cancelled or completed'),
    created_via: z.enum(['api', 'chat']),
    created_by: z.string().uuid().nullable().describe('The administrator who made it; null for a task made in an anonymous chat'),
    created_at: timestamp,
    updated_at: timestamp,
    cancelled_at: timestamp.nullable(),
  })
  .meta({ id: 'ScheduledTask' });

export const scheduledRun = z
  .object({
    run_id: z.string().uuid(),
    task_id: z.string().uuid(),
    due_at: timestamp,
    execution_state: z.enum(EXECUTION_STATES),
    heartbeat_stale: z.boolean().describe('Running, and no heartbeat for two thirds of [scheduled_tasks] run_lease_seconds'),
    reason: z.string().nullable().describe('Why a run was skipped, deferred, cancelled or failed'),
    session_id: z.string().nullable().describe('The session the run posts into'),
    turn_id: z.string().uuid().nullable().describe('The turn the run produced'),
    attempt_count: z.number().int(),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
    worker_heartbeat_at: timestamp.nullable(),
    derived_generation_usage: tokenUsageSummary.describe("Read from the run's turn; no_model_invocation when it produced none"),
  })
  .meta({ id: 'ScheduledTaskRun' });
