import { useMutation, useQuery } from '@tanstack/react-query';
import { Fragment, useState, type FormEvent } from 'react';
import { Link, useParams } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { Pager } from '../components/pager';
import { RUN_ENDED, percent } from '../components/evaluation-runs';
import { ErrorMessage, ListStates, Loading } from '../components/states';
import { useCan } from '../session';

type Verdict = components['schemas']['EvaluationGateVerdict'];
type Slices = components['schemas']['EvaluationRunSlices'];
type Slice = Slices['by_domain'][number];

const PAGE = 50;
const POLL_MS = 1000;
const GATE_FIELDS = [
  ['minimum_items', 'Minimum items', 1],
  ['score_pass_rate_min', 'Pass rate at least (0 to 1)', 0.01],
  ['score_f1_min', 'Token F1 at least (0 to 1)', 0.01],
  ['max_failed_item_ratio', 'Failed items at most (0 to 1)', 0.01],
  ['llm_judge_min', 'Judge score at least (0 to 1)', 0.01],
] as const;
type GateField = (typeof GATE_FIELDS)[number][0];

/** Judges the run by the gate policy, each field left empty taking the host's default, and shows the verdict. */
function Gate({ path }: { path: { params: { path: { agent_id: string; evaluation_run_id: string } } } }) {
  const [policy, setPolicy] = useState<Partial<Record<GateField, string>>>({});
  const gate = useMutation<Verdict, ApiError>({
    mutationFn: () =>
      expectData(
        api.POST('/agents/{agent_id}/evaluation-runs/{evaluation_run_id}/evaluate-gate', {
          ...path,
          body: Object.fromEntries(Object.entries(policy).flatMap(([name, value]) => (value ? [[name, Number(value)]] : []))),
        }),
      ),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    gate.mutate();
  };
  const verdict = gate.data;
  return (
    <section aria-labelledby="gate-heading">
      <h2 id="gate-heading">Gate</h2>
      <form className="form" onSubmit={submit} aria-label="Gate policy">
        <p className="muted">Empty fields take the host's policy ([evaluation.gate]).</p>
        {GATE_FIELDS.map(([name, label, step]) => (
          <Fragment key={name}>
            <label htmlFor={`gate-${name}`}>{label}</label>
            <input
              id={`gate-${name}`}
              type="number"
              min={0}
              step={step}
              value={policy[name] ?? ''}
              onChange={(e) => setPolicy({ ...policy, [name]: e.target.value })}
            />
          </Fragment>
        ))}
        {gate.error && <ErrorMessage error={gate.error} action="evaluate the gate" />}
        <button type="submit" disabled={gate.isPending}>
          Evaluate gate
        </button>
      </form>
      {verdict && (
        <div role="status" className={verdict.passed ? 'guard-ok' : 'guard-failed'}>
          <strong>{verdict.passed ? 'Passed' : 'Failed'}</strong>: {verdict.metrics.items} items, pass rate {percent(verdict.metrics.pass_rate)}, F1{' '}
          {percent(verdict.metrics.mean_token_f1)}, failed {percent(verdict.metrics.failed_item_ratio)}, judge {percent(verdict.metrics.mean_judge_score)}.
          {verdict.reasons.length > 0 && (
            <ul>
              {verdict.reasons.map((reason) => (
                <li key={reason}>{reason}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </section>
  );
}

function SliceTable({ caption, rows }: { caption: string; rows: Slice[] }) {
  if (rows.length === 0) return null;
  return (
    <DataTable
      compact
      caption={caption}
      rows={rows}
      rowKey={(row) => row.value ?? ''}
      columns={[
        { header: caption, cell: (row) => row.value ?? '(none)' },
        { header: 'Items', cell: (row) => `${row.item_count}${row.failed_count ? `, ${row.failed_count} failed` : ''}` },
        { header: 'Exact', cell: (row) => percent(row.exact_match_rate) },
        { header: 'F1', cell: (row) => percent(row.mean_token_f1) },
        { header: 'Pass rate', cell: (row) => percent(row.pass_rate) },
        { header: 'Judge', cell: (row) => percent(row.mean_judge_score) },
      ]}
    />
  );
}

/** Scores by domain, difficulty and source: where a change helped and where it hurt. */
function RunSlices({ path, version }: { path: { params: { path: { agent_id: string; evaluation_run_id: string } } }; version: string }) {
  const slices = useQuery({
    queryKey: ['evaluation-slices', path.params.path.evaluation_run_id, version],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/evaluation-runs/{evaluation_run_id}/slices', path)),
  });
  return (
    <section aria-labelledby="slices-heading">
      <h2 id="slices-heading">Slices</h2>
      {slices.isPending && <Loading what="slices" />}
      {slices.isError && <ErrorMessage error={slices.error} action="read the slices" />}
      {slices.data && (
        <>
          <SliceTable caption="Domain" rows={slices.data.by_domain} />
          <SliceTable caption="Difficulty" rows={slices.data.by_difficulty} />
          <SliceTable caption="Source" rows={slices.data.by_source} />
        </>
      )}
    </section>
  );
}

/** This run against an earlier one on the same snapshot, item by item. */
function Compare({ agentId, runId, datasetId }: { agentId: string; runId: string; datasetId: string }) {
  const [baseline, setBaseline] = useState('');
  const runs = useQuery({
    queryKey: ['evaluation-dataset-runs', datasetId],
    queryFn: () => expectData(api.GET('/evaluation-datasets/{dataset_id}/runs', { params: { path: { dataset_id: datasetId }, query: { limit: 50 } } })),
  });
  const others = runs.data?.items.filter((run) => run.run_id !== runId && run.execution_state === 'completed') ?? [];
  const comparison = useQuery({
    queryKey: ['evaluation-compare', runId, baseline],
    enabled: Boolean(baseline),
    queryFn: () =>
      expectData(
        api.GET('/agents/{agent_id}/evaluation-runs/{evaluation_run_id}/compare', {
          params: { path: { agent_id: agentId, evaluation_run_id: runId }, query: { baseline_run_id: baseline } },
        }),
      ),
  });
  if (others.length === 0) return null;
  const changed = comparison.data?.items.filter((item) => item.change !== 'unchanged') ?? [];
  return (
    <section aria-labelledby="compare-heading">
      <h2 id="compare-heading">Compare</h2>
      <label htmlFor="compare-baseline">Baseline run</label>{' '}
      <select id="compare-baseline" value={baseline} onChange={(e) => setBaseline(e.target.value)}>
        <option value="">Choose a run</option>
        {others.map((run) => (
          <option key={run.run_id} value={run.run_id}>
            {new Date(run.created_at).toLocaleString()} · {run.model_name ?? 'agent routing'} · pass {percent(run.summary.pass_rate)}
          </option>
        ))}
      </select>
      {comparison.isError && <ErrorMessage error={comparison.error} action="compare the runs" />}
      {comparison.data && (
        <>
          <p role="status">
            {comparison.data.summary.improved} improved, {comparison.data.summary.regressed} regressed, {comparison.data.summary.unchanged} unchanged
            {comparison.data.summary.unscored ? `, ${comparison.data.summary.unscored} unscored` : ''}; pass rate{' '}
            {signed(comparison.data.summary.delta_pass_rate)}, F1 {signed(comparison.data.summary.delta_mean_token_f1)}, judge{' '}
            {signed(comparison.data.summary.delta_mean_judge_score)}.
          </p>
          {changed.length > 0 && (
            <DataTable
              compact
              rows={changed}
              rowKey={(item) => item.item_id}
              columns={[
                { header: '#', cell: (item) => item.position },
                { header: 'Question', cell: (item) => item.question },
                { header: 'Change', cell: (item) => item.change },
                { header: 'Baseline answer', cell: (item) => item.baseline?.predicted_answer ?? '' },
                { header: 'This answer', cell: (item) => item.candidate?.predicted_answer ?? '' },
                { header: 'F1', cell: (item) => signed(item.delta_token_f1) },
                { header: 'Judge', cell: (item) => signed(item.delta_judge_score) },
              ]}
            />
          )}
        </>
      )}
    </section>
  );
}

/** A change in a share, in points with its sign. */
function signed(delta: number | null): string {
  if (delta === null) return '—';
  const points = Math.round(delta * 1000) / 10;
  return `${points > 0 ? '+' : ''}${points} pt`;
}

/** The scored items in dataset order, a page at a time. */
function Results({ path, version }: { path: { params: { path: { agent_id: string; evaluation_run_id: string } } }; version: string }) {
  const [offset, setOffset] = useState(0);
  const results = useQuery({
    queryKey: ['evaluation-results', path.params.path.evaluation_run_id, version, offset],
    queryFn: () =>
      expectData(
        api.GET('/agents/{agent_id}/evaluation-runs/{evaluation_run_id}/results', { ...path, params: { ...path.params, query: { offset, limit: PAGE } } }),
      ),
  });
  return (
    <section aria-labelledby="results-heading">
      <h2 id="results-heading">Results</h2>
      <ListStates query={results} count={results.data?.items.length} what="results" empty="No item scored yet." />
      {results.data && results.data.items.length > 0 && (
        <>
          <DataTable
            compact
            rows={results.data.items}
            rowKey={(result) => result.result_id}
            columns={[
              { header: '#', cell: (result) => result.position },
              { header: 'Question', cell: (result) => result.question },
              { header: 'Answer', cell: (result) => result.predicted_answer ?? result.error_message ?? '' },
              {
                header: 'Expected',
                cell: (result) =>
                  result.expected_answers.map((answer, i) => (
                    <div key={i} className={result.rule_score?.matched_expected_answer_index === i ? 'matched' : undefined}>
                      {answer}
                    </div>
                  )),
              },
              { header: 'Status', cell: (result) => result.status },
              { header: 'F1', cell: (result) => percent(result.rule_score?.token_f1) },
              { header: 'Pass', cell: (result) => (result.rule_score ? (result.rule_score.pass_rate === 1 ? 'yes' : 'no') : '—') },
              {
                header: 'Judge',
                cell: (result) =>
                  result.judge_score?.score !== null && result.judge_score?.score !== undefined
                    ? `${percent(result.judge_score.score)}${result.judge_score.reason ? `: ${result.judge_score.reason}` : ''}`
                    : result.judge_status,
              },
              { header: 'Tokens', cell: (result) => result.generation_usage.total_tokens + result.judge_usage.total_tokens },
              { header: 'Latency', cell: (result) => `${result.latency_ms} ms` },
            ]}
          />
          <Pager offset={offset} shown={results.data.items.length} total={results.data.total} pageSize={PAGE} onChange={setOffset} />
        </>
      )}
    </section>
  );
}

/**
 * One evaluation run: its progress (followed while it runs), score summary and usage, the gate, slices, a comparison
 * with an earlier run on the same snapshot, the scored items, and the results as CSV.
 */
export function EvaluationRunPage() {
  const { agentId, runId } = useParams() as { agentId: string; runId: string };
  const mayWrite = useCan('evaluation.write');
  const path = { params: { path: { agent_id: agentId, evaluation_run_id: runId } } };
  const run = useQuery({
    queryKey: ['evaluation-run', runId],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/evaluation-runs/{evaluation_run_id}', path)),
    refetchInterval: (query) => (query.state.data && RUN_ENDED.has(query.state.data.execution_state) ? false : POLL_MS),
  });
  if (run.isPending) return <Loading what="the run" />;
  if (run.isError) return <ErrorMessage error={run.error} action="read the run" />;
  const r = run.data;
  const ended = RUN_ENDED.has(r.execution_state);
  // Results and slices are read again as items complete, keyed by the progress the summary reports.
  const version = `${r.execution_state}:${r.items_completed}`;
  return (
    <>
      <h1>Evaluation run</h1>
      <p className="muted">
        <Link to={`/agents/${agentId}`}>The agent</Link> on <Link to={`/evaluation/${r.dataset_id}`}>its snapshot</Link> · started <When at={r.created_at} />
      </p>
      <dl className="facts">
        <dt>State</dt>
        <dd>
          <span role="status">
            {r.execution_state}
            {r.heartbeat_stale ? ' (heartbeat stale)' : ''}
            {r.error_message ? `: ${r.error_message}` : ''}
          </span>
        </dd>
        <dt>Items</dt>
        <dd>
          <progress max={r.item_count || 1} value={r.items_completed} aria-label="Items scored" /> {r.items_completed} of {r.item_count}
          {r.items_failed ? `, ${r.items_failed} failed` : ''}
        </dd>
        <dt>Model</dt>
        <dd>
          {r.model_name
            ? `${r.model_provider ?? ''} ${r.model_name}${r.model_temperature === null ? '' : ` at ${r.model_temperature}`}`
            : 'the agent’s routing'}
        </dd>
        <dt>Judge prompt</dt>
        <dd>version {r.judge_prompt_version}</dd>
        <dt>Exact match</dt>
        <dd>{percent(r.summary.exact_match_rate)}</dd>
        <dt>Token F1</dt>
        <dd>{percent(r.summary.mean_token_f1)}</dd>
        <dt>Pass rate</dt>
        <dd>{percent(r.summary.pass_rate)}</dd>
        <dt>Judge score</dt>
        <dd>
          {percent(r.summary.mean_judge_score)} ({r.summary.judged_count} judged
          {r.summary.invalid_judge_count ? `, ${r.summary.invalid_judge_count} invalid` : ''})
        </dd>
        <dt>Tokens</dt>
        <dd>
          {r.generation_usage_rollup.total_tokens} answering, {r.judge_usage_rollup.total_tokens} judging
        </dd>
      </dl>
      {ended && (
        <p>
          <a href={`/agents/${agentId}/evaluation-runs/${runId}/results.csv`} download>
            Download the results as CSV
          </a>
        </p>
      )}
      {mayWrite && r.execution_state === 'completed' && <Gate path={path} />}
      <RunSlices path={path} version={version} />
      {ended && <Compare agentId={agentId} runId={runId} datasetId={r.dataset_id} />}
      <Results path={path} version={version} />
    </>
  );
}
