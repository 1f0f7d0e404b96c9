import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useSearchParams } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

type Task = components['schemas']['ScheduledTask'];

const STATUSES = ['active', 'completed', 'cancelled'] as const;
const KINDS = ['once', 'interval', 'cron'] as const;

/** A task's schedule in words, from its normalised payload (docs/api-decisions.md). */
function describe(task: Task): string {
  const schedule = task.schedule_payload as Record<string, unknown>;
  const rest = Object.entries(schedule)
    .filter(([name]) => name !== 'kind')
    .map(([name, value]) => `${name.replaceAll('_', ' ')} ${String(value)}`)
    .join(', ');
  return `${task.schedule_kind}${rest ? `: ${rest}` : ''}`;
}

/** One task's runs, newest first, with their state and the usage of the turns they made. */
function Runs({ taskId }: { taskId: string }) {
  const runs = useQuery({
    queryKey: ['scheduled-task-runs', taskId],
    queryFn: () => expectData(api.GET('/scheduled-tasks/{task_id}/runs', { params: { path: { task_id: taskId } } })),
  });
  if (runs.isPending) return <Loading what="runs" />;
  if (runs.isError) return <ErrorMessage error={runs.error} action="list the runs" />;
  if (runs.data.items.length === 0) return <p className="muted">No run yet.</p>;
  return (
    <DataTable
      compact
      rows={runs.data.items}
      rowKey={(run) => run.run_id}
      columns={[
        { header: 'Due', cell: (run) => <When at={run.due_at} /> },
        { header: 'State', cell: (run) => `${run.execution_state}${run.heartbeat_stale ? ' (heartbeat stale)' : ''}` },
        { header: 'Reason', cell: (run) => run.reason ?? '' },
        { header: 'Tokens', cell: (run) => run.derived_generation_usage?.total_tokens ?? '—' },
        { header: 'Finished', cell: (run) => <When at={run.completed_at} /> },
      ]}
    />
  );
}

/** Scheduled tasks by status and kind, each with its runs; an active one can be cancelled (its history stays). */
export function ScheduledTasksPage() {
  const mayCancel = useCan('scheduled_tasks.write');
  const queries = useQueryClient();
  const [params, setParams] = useSearchParams();
  const status = (params.get('status') ?? '') as (typeof STATUSES)[number] | '';
  const kind = (params.get('kind') ?? '') as (typeof KINDS)[number] | '';
  const open = params.get('task');
  const tasks = useInfiniteQuery({
    queryKey: ['scheduled-tasks', status, kind],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      expectData(
        api.GET('/scheduled-tasks', {
          params: { query: { limit: 50, ...(status && { status }), ...(kind && { schedule_kind: kind }), ...(pageParam && { cursor: pageParam }) } },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const cancel = useMutation<unknown, ApiError, string>({
    mutationFn: (taskId) => expectData(api.POST('/scheduled-tasks/{task_id}/cancel', { params: { path: { task_id: taskId } } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['scheduled-tasks'] }),
  });
  const set = (next: Record<string, string>) => setParams(Object.fromEntries(Object.entries({ status, kind, task: open ?? '', ...next }).filter(([, v]) => v)));
  const items = tasks.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      <h1>Scheduled tasks</h1>
      <div className="toolbar">
        <label htmlFor="tasks-status">Status</label>
        <select id="tasks-status" value={status} onChange={(e) => set({ status: e.target.value })}>
          <option value="">Any</option>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <label htmlFor="tasks-kind">Schedule</label>
        <select id="tasks-kind" value={kind} onChange={(e) => set({ kind: e.target.value })}>
          <option value="">Any</option>
          {KINDS.map((k) => (
            <option key={k}>{k}</option>
          ))}
        </select>
      </div>
      {tasks.isPending && <Loading what="scheduled tasks" />}
      {tasks.isError && <ErrorMessage error={tasks.error} action="list the scheduled tasks" />}
      {tasks.isSuccess && items.length === 0 && <Empty>No scheduled task{status || kind ? ' matches' : ' yet: agents make them from a chat'}.</Empty>}
      {cancel.error && <ErrorMessage error={cancel.error} action="cancel the task" />}
      {items.length > 0 && (
        <DataTable
          rows={items}
          rowKey={(task) => task.task_id}
          columns={[
            { header: 'Schedule', cell: describe },
            { header: 'Asks', cell: (task) => String((task.payload as { message?: unknown }).message ?? JSON.stringify(task.payload)) },
            { header: 'Target', cell: (task) => task.target_mode },
            { header: 'Status', cell: (task) => task.status },
            { header: 'Next run', cell: (task) => <When at={task.next_run_at} /> },
            {
              header: 'Actions',
              cell: (task) => (
                <span className="toolbar">
                  <button
                    type="button"
                    className="secondary"
                    aria-pressed={open === task.task_id}
                    onClick={() => set({ task: open === task.task_id ? '' : task.task_id })}
                  >
                    Runs
                  </button>
                  {mayCancel && task.status === 'active' && (
                    <button type="button" className="secondary" onClick={() => cancel.mutate(task.task_id)} disabled={cancel.isPending}>
                      Cancel
                    </button>
                  )}
                </span>
              ),
            },
          ]}
        />
      )}
      <ShowMore list={tasks} what="tasks" />
      {open && (
        <section aria-label="Runs of the task">
          <h2>Runs</h2>
          <Runs taskId={open} />
        </section>
      )}
    </>
  );
}
