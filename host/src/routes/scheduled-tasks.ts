import { createTaskSchema, taskFiltersSchema } from '@agent-host/core';
import { z } from 'zod';
import { scheduledRun, scheduledTask } from '../schemas/scheduled-tasks.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const notFound = 'No such scheduled task (SCHEDULED_TASK_NOT_FOUND)';

/** Scheduled tasks (spec 4.6): read and cancelled here; made in chats by the scheduler stage, or here by administrators. */
export const scheduledTaskRoutes: RouteFactory<'scheduledTasks'> = (domains) => {
  const taskId = (params: Record<string, string>) => String(params.task_id);
  return [
    route({
      method: 'post',
      path: '/scheduled-tasks',
      access: { permission: 'scheduled_tasks.write' },
      summary: 'Schedule a task on a chat agent: at a time, every interval, or on a cron expression in a time zone',
      body: createTaskSchema,
      example: {
        agent_id: '3f1c2a9e-8d4b-4c6f-9a2e-1b7d5e0c4a81',
        session_id: 'support-4711',
        schedule_payload: { kind: 'cron', expression: '0 9 * * 1-5', time_zone: 'Europe/Berlin' },
        payload: { message: 'Remind me to send the stand-up notes.' },
        conflict_policy: 'skip',
      },
      success: { status: 201, description: 'The task, with its normalised schedule_payload and first next_run_at', schema: scheduledTask },
      refusals: {
        409: 'The session or the agent has the most active tasks [scheduled_tasks] allows (SCHEDULED_TASK_LIMIT)',
      },
      handler: async (_req, res, { body, operation }) => {
        res.status(201);
        return domains.scheduledTasks.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/scheduled-tasks',
      access: { permission: 'scheduled_tasks.read' },
      summary: 'Scheduled tasks, newest first, filtered by agent_id, session_id, status, target_mode or schedule_kind',
      query: taskFiltersSchema.extend(pagingFields),
      success: { status: 200, description: 'A page of tasks', schema: pageOf(scheduledTask) },
      handler: async (_req, _res, { query: { limit, cursor, ...filters } }) => domains.scheduledTasks.list(filters, { limit, cursor }),
    }),
    route({
      method: 'get',
      path: '/scheduled-tasks/:task_id',
      access: { permission: 'scheduled_tasks.read' },
      summary: 'A scheduled task with its normalised schedule_payload, payload, target_mode, conflict_policy and next_run_at',
      success: { status: 200, description: 'The task', schema: scheduledTask },
      refusals: { 404: notFound },
      handler: async (req) => domains.scheduledTasks.get(taskId(req.params)),
    }),
    route({
      method: 'get',
      path: '/scheduled-tasks/:task_id/runs',
      access: { permission: 'scheduled_tasks.read' },
      summary: "The task's runs, newest first, with execution_state, heartbeat_stale and derived_generation_usage",
      query: z.object(pagingFields).strict(),
      success: { status: 200, description: 'A page of runs', schema: pageOf(scheduledRun) },
      refusals: { 404: notFound },
      handler: async (req, _res, { query }) => domains.scheduledTasks.runs(taskId(req.params), query),
    }),
    route({
      method: 'post',
      path: '/scheduled-tasks/:task_id/cancel',
      access: { permission: 'scheduled_tasks.write' },
      summary: 'Cancel a task: no more runs; runs not started are cancelled, a running one finishes, the history stays',
      success: { status: 200, description: 'The cancelled task', schema: scheduledTask },
      refusals: { 404: notFound, 409: 'The task was already cancelled or has completed (SCHEDULED_TASK_NOT_ACTIVE)' },
      handler: async (req, _res, { operation }) => domains.scheduledTasks.cancel(taskId(req.params), operation),
    }),
  ];
};
