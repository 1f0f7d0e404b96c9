import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type ChangeEvent, type FormEvent } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import type { components } from '@agent-host/client';
import { useAgentsOfType } from '../agents-of-type';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { Pager } from '../components/pager';
import { FollowedRuns, type EvaluationRun as Run } from '../components/evaluation-runs';
import { ErrorMessage, IssueList, ListStates, Loading } from '../components/states';
import { useCan } from '../session';
import { useUpload } from '../upload';

type Dataset = components['schemas']['EvaluationDataset'];

const PAGE = 50;

/** Replaces the items with a CSV's rows (the host keeps the file as the source CSV); a bad file changes nothing. */
function ImportCsv({ dataset, onImported }: { dataset: Dataset; onImported: () => void }) {
  const { progress, error, send } = useUpload();
  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    event.target.value = '';
    if (!file) return;
    const form = new FormData();
    form.append('file', file);
    if (await send<Dataset>(`/evaluation-datasets/${dataset.dataset_id}/import`, form)) onImported();
  }
  return (
    <section aria-labelledby="import-heading">
      <h2 id="import-heading">Import questions</h2>
      <p className="muted">
        A CSV with a <code>question</code> column, one or more <code>expected_answer</code> columns (<code>expected_answer_2</code>, …), and optionally{' '}
        <code>domain</code>, <code>difficulty</code>, <code>source</code> and <code>metadata</code>. It replaces every item.
      </p>
      <label htmlFor="import-file">CSV file</label> <input id="import-file" type="file" accept=".csv,text/csv" onChange={(e) => void upload(e)} />
      {progress !== undefined && <progress max={1} value={progress} aria-label="Upload of the CSV" />}
      {error && <CsvError error={error} />}
    </section>
  );
}

/** A refused import names each row and column the host found wrong. */
function CsvError({ error }: { error: ApiError }) {
  return (
    <>
      <ErrorMessage error={error} action="import the CSV" />
      <IssueList error={error} skip={2} />
    </>
  );
}

/** Adds reviewed document-recognition runs, one item each, by their ids. */
function ImportRuns({ datasetId, onImported }: { datasetId: string; onImported: () => void }) {
  const [ids, setIds] = useState('');
  const add = useMutation<unknown, ApiError>({
    mutationFn: () =>
      expectData(
        api.POST('/evaluation-datasets/{dataset_id}/document-recognition-runs/import', {
          params: { path: { dataset_id: datasetId } },
          body: { run_id_list: ids.split(/[\s,]+/).filter(Boolean) },
        }),
      ),
    onSuccess: () => {
      setIds('');
      onImported();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    add.mutate();
  };
  return (
    <form className="form" onSubmit={submit} aria-label="Add reviewed runs">
      <h2>Add reviewed runs</h2>
      <label htmlFor="run-ids">Recognition run ids, one a line</label>
      <textarea id="run-ids" value={ids} onChange={(e) => setIds(e.target.value)} />
      {add.error && <ErrorMessage error={add.error} action="add the runs" />}
      <button type="submit" disabled={add.isPending || !ids.trim()}>
        Add runs
      </button>
    </form>
  );
}

/** The items in CSV order, a page at a time. */
function Items({ dataset }: { dataset: Dataset }) {
  const [offset, setOffset] = useState(0);
  const items = useQuery({
    queryKey: ['evaluation-items', dataset.dataset_id, dataset.updated_at, offset],
    queryFn: () =>
      expectData(api.GET('/evaluation-datasets/{dataset_id}/items', { params: { path: { dataset_id: dataset.dataset_id }, query: { offset, limit: PAGE } } })),
  });
  return (
    <section aria-labelledby="items-heading">
      <h2 id="items-heading">Items</h2>
      <ListStates query={items} count={items.data?.items.length} what="items" empty="No item yet." />
      {items.data && items.data.items.length > 0 && (
        <>
          <DataTable
            compact
            rows={items.data.items}
            rowKey={(item) => item.item_id}
            columns={[
              { header: '#', cell: (item) => item.position },
              { header: 'Question', cell: (item) => item.question },
              {
                header: 'Accepted answers',
                cell: (item) => item.expected_answers.join(' | ') || (item.expected_fields ? JSON.stringify(item.expected_fields) : ''),
              },
              { header: 'Domain', cell: (item) => item.domain ?? '' },
              { header: 'Difficulty', cell: (item) => item.difficulty ?? '' },
              { header: 'Source', cell: (item) => item.source ?? '' },
            ]}
          />
          <Pager offset={offset} shown={items.data.items.length} total={items.data.total} pageSize={PAGE} onChange={setOffset} />
        </>
      )}
    </section>
  );
}

/** Starts a run of an agent on this frozen snapshot: the agent's own routing, or one explicit model. */
function StartRun({ dataset }: { dataset: Dataset }) {
  const agents = useAgentsOfType(dataset.task_type === 'qa' ? 'chat' : 'fusion');
  const [agentId, setAgentId] = useState('');
  const [modelName, setModelName] = useState('');
  const [modelProvider, setModelProvider] = useState('');
  const [temperature, setTemperature] = useState('');
  const navigate = useNavigate();
  const chosen = agentId || agents.data?.[0]?.agent_id || '';
  const start = useMutation<Run, ApiError>({
    mutationFn: () =>
      expectData(
        api.POST('/agents/{agent_id}/evaluation-runs', {
          params: { path: { agent_id: chosen } },
          body: {
            dataset_id: dataset.dataset_id,
            ...(modelName && { model_name: modelName }),
            ...(modelProvider && { model_provider: modelProvider }),
            ...(temperature && { model_temperature: Number(temperature) }),
          },
        }),
      ),
    onSuccess: (run) => navigate(`/agents/${run.agent_id}/evaluation-runs/${run.run_id}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    start.mutate();
  };
  if (agents.isPending) return <Loading what="agents" />;
  if (agents.isError) return <ErrorMessage error={agents.error} action="list the agents" />;
  return (
    <form className="form" onSubmit={submit} aria-label="Run an agent">
      <h2>Run an agent on this snapshot</h2>
      {agents.data.length === 0 ? (
        <p className="muted">No {dataset.task_type === 'qa' ? 'chat' : 'fusion'} agent to run.</p>
      ) : (
        <>
          <label htmlFor="run-agent">Agent</label>
          <select id="run-agent" value={chosen} onChange={(e) => setAgentId(e.target.value)}>
            {agents.data.map((agent) => (
              <option key={agent.agent_id} value={agent.agent_id}>
                {agent.name}
              </option>
            ))}
          </select>
          <p className="muted">Leave the model empty to run the agent's own routing; a model given here replaces it for this run.</p>
          <label htmlFor="run-model">Model</label>
          <input id="run-model" value={modelName} onChange={(e) => setModelName(e.target.value)} placeholder="the agent's routing" />
          <label htmlFor="run-provider">Provider</label>
          <input id="run-provider" value={modelProvider} onChange={(e) => setModelProvider(e.target.value)} />
          <label htmlFor="run-temperature">Temperature</label>
          <input id="run-temperature" type="number" min={0} max={2} step={0.1} value={temperature} onChange={(e) => setTemperature(e.target.value)} />
          {start.error && <ErrorMessage error={start.error} action="start the run" />}
          <button type="submit" disabled={start.isPending}>
            Start run
          </button>
        </>
      )}
    </form>
  );
}

/** A refused delete names the agents whose runs still use the dataset. */
function DeleteError({ error }: { error: ApiError }) {
  const detail = error.detail as { referencing_agents?: { agent_id: string; agent_name: string; run_count: number }[] } | null;
  return (
    <>
      <ErrorMessage error={error} action="delete the dataset" />
      {detail?.referencing_agents && (
        <ul>
          {detail.referencing_agents.map((agent) => (
            <li key={agent.agent_id}>
              <Link to={`/agents/${agent.agent_id}`}>{agent.agent_name}</Link>: {agent.run_count} run{agent.run_count === 1 ? '' : 's'}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/**
 * One dataset: its items, a CSV import (or reviewed recognition runs) while it is editable, a freeze into an
 * immutable snapshot, and on a snapshot, agent runs started and followed.
 */
export function EvaluationDatasetPage() {
  const datasetId = useParams().datasetId!;
  const mayWrite = useCan('evaluation.write');
  const queries = useQueryClient();
  const navigate = useNavigate();
  const path = { params: { path: { dataset_id: datasetId } } };
  const dataset = useQuery({ queryKey: ['evaluation-dataset', datasetId], queryFn: () => expectData(api.GET('/evaluation-datasets/{dataset_id}', path)) });
  const refresh = () => void queries.invalidateQueries({ queryKey: ['evaluation-dataset', datasetId] });
  const freeze = useMutation<Dataset, ApiError>({
    mutationFn: () => expectData(api.POST('/evaluation-datasets/{dataset_id}/freeze', path)),
    onSuccess: async (snapshot) => {
      await queries.invalidateQueries({ queryKey: ['evaluation-datasets'] });
      await navigate(`/evaluation/${snapshot.dataset_id}`);
    },
  });
  const remove = useMutation<unknown, ApiError>({
    mutationFn: async () => {
      const { response, error } = await api.DELETE('/evaluation-datasets/{dataset_id}', path);
      if (!response.ok) throw error as ApiError;
    },
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['evaluation-datasets'] });
      await navigate('/evaluation');
    },
  });

  if (dataset.isPending) return <Loading what="the dataset" />;
  if (dataset.isError) return <ErrorMessage error={dataset.error} action="read the dataset" />;
  const d = dataset.data;
  return (
    <>
      <h1>{d.name}</h1>
      <p className="muted">
        {d.task_type} · {d.frozen ? 'frozen snapshot' : 'editable'} · {d.item_count} items
        {d.parent_dataset_id && (
          <>
            {' '}
            · of <Link to={`/evaluation/${d.parent_dataset_id}`}>its dataset</Link>
          </>
        )}
        {!d.frozen && d.snapshot_count > 0 && ` · ${d.snapshot_count} snapshots`}
      </p>
      {d.description && <p>{d.description}</p>}
      {d.source_csv_filename && (
        <p>
          Source CSV: {d.source_csv_download_url ? <a href={d.source_csv_download_url}>{d.source_csv_filename}</a> : d.source_csv_filename}
          {d.source_csv_uploaded_at && (
            <>
              , uploaded <When at={d.source_csv_uploaded_at} />
            </>
          )}
        </p>
      )}
      {mayWrite && (
        <div className="toolbar">
          {!d.frozen && (
            <button type="button" onClick={() => freeze.mutate()} disabled={freeze.isPending || d.item_count === 0}>
              Freeze a snapshot
            </button>
          )}
          <button type="button" className="secondary" onClick={() => remove.mutate()} disabled={remove.isPending}>
            Delete
          </button>
        </div>
      )}
      {freeze.error && <ErrorMessage error={freeze.error} action="freeze the dataset" />}
      {remove.error && <DeleteError error={remove.error} />}
      {mayWrite && !d.frozen && d.task_type === 'qa' && <ImportCsv dataset={d} onImported={refresh} />}
      {mayWrite && !d.frozen && d.task_type === 'document_recognition' && <ImportRuns datasetId={datasetId} onImported={refresh} />}
      {mayWrite && d.frozen && <StartRun dataset={d} />}
      <FollowedRuns
        queryKey={['evaluation-dataset-runs', datasetId]}
        list={() => expectData(api.GET('/evaluation-datasets/{dataset_id}/runs', { params: { path: { dataset_id: datasetId }, query: { limit: 50 } } }))}
        empty="No run on this dataset yet."
      />
      <Items dataset={d} />
    </>
  );
}
