import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData } from '../api';
import { DataTable } from './data-table';
import { ListStates } from './states';

export type EvaluationRun = components['schemas']['EvaluationRun'];

/** A run in any other state (queued, running, recovering, heartbeat_expired) is followed until it ends. */
export const RUN_ENDED = new Set<EvaluationRun['execution_state']>(['completed', 'failed']);
const POLL_MS = 1000;

/** A share from 0 to 1 as a percentage, or a dash when nothing was scored. */
export function percent(share: number | null | undefined): string {
  return share === null || share === undefined ? '—' : `${Math.round(share * 1000) / 10} %`;
}

/** Runs with their state, progress and headline scores; each opens its results. */
export function RunTable({ runs }: { runs: EvaluationRun[] }) {
  return (
    <DataTable
      compact
      rows={runs}
      rowKey={(run) => run.run_id}
      columns={[
        {
          header: 'Started',
          cell: (run) => <Link to={`/agents/${run.agent_id}/evaluation-runs/${run.run_id}`}>{new Date(run.created_at).toLocaleString()}</Link>,
        },
        { header: 'State', cell: (run) => `${run.execution_state}${run.heartbeat_stale ? ' (heartbeat stale)' : ''}` },
        { header: 'Items', cell: (run) => `${run.items_completed} of ${run.item_count}${run.items_failed ? `, ${run.items_failed} failed` : ''}` },
        { header: 'Model', cell: (run) => run.model_name ?? 'agent routing' },
        { header: 'Pass rate', cell: (run) => percent(run.summary.pass_rate) },
        { header: 'Judge', cell: (run) => percent(run.summary.mean_judge_score) },
        { header: 'Tokens', cell: (run) => run.combined_total_tokens },
      ]}
    />
  );
}

/** Runs read by `list`, newest first, followed while one runs. */
export function FollowedRuns({ queryKey, list, empty }: { queryKey: string[]; list: () => Promise<{ items: EvaluationRun[] }>; empty: string }) {
  const runs = useQuery({
    queryKey,
    queryFn: list,
    refetchInterval: (query) => (query.state.data?.items.some((run) => !RUN_ENDED.has(run.execution_state)) ? POLL_MS : false),
  });
  return (
    <section aria-labelledby="evaluation-runs-heading">
      <h2 id="evaluation-runs-heading">Evaluation runs</h2>
      <ListStates query={runs} count={runs.data?.items.length} what="evaluation runs" empty={empty} />
      {runs.data && runs.data.items.length > 0 && <RunTable runs={runs.data.items} />}
    </section>
  );
}

/** An agent's evaluation runs; runs start from a frozen snapshot's page. */
export function AgentEvaluationRuns({ agentId }: { agentId: string }) {
  return (
    <FollowedRuns
      queryKey={['agent-evaluation-runs', agentId]}
      list={() => expectData(api.GET('/agents/{agent_id}/evaluation-runs', { params: { path: { agent_id: agentId }, query: { limit: 20 } } }))}
      empty="No evaluation run yet: start one from a frozen snapshot on the Evaluation page."
    />
  );
}
