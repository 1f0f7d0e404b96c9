import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

type Dataset = components['schemas']['EvaluationDataset'];
type TaskType = Dataset['task_type'];

/** A new, empty dataset; its page takes the CSV (or, for document recognition, reviewed runs). */
function NewDataset() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [taskType, setTaskType] = useState<TaskType>('qa');
  const navigate = useNavigate();
  const queries = useQueryClient();
  const create = useMutation<Dataset, ApiError>({
    mutationFn: () => expectData(api.POST('/evaluation-datasets', { body: { name, task_type: taskType, ...(description && { description }) } })),
    onSuccess: async (dataset) => {
      await queries.invalidateQueries({ queryKey: ['evaluation-datasets'] });
      await navigate(`/evaluation/${dataset.dataset_id}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form className="form" onSubmit={submit} aria-label="New dataset">
      <h2>New dataset</h2>
      <label htmlFor="dataset-name">Name</label>
      <input id="dataset-name" value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="dataset-description">Description</label>
      <textarea id="dataset-description" value={description} onChange={(e) => setDescription(e.target.value)} />
      <label htmlFor="dataset-task">Task</label>
      <select id="dataset-task" value={taskType} onChange={(e) => setTaskType(e.target.value as TaskType)}>
        <option value="qa">qa: questions for a chat agent</option>
        <option value="document_recognition">document_recognition: reviewed recognition runs</option>
      </select>
      {create.error && <ErrorMessage error={create.error} action="create the dataset" />}
      <button type="submit" disabled={create.isPending}>
        Create dataset
      </button>
    </form>
  );
}

/** Evaluation datasets and their frozen snapshots, newest first; each opens its items, snapshots and runs. */
export function EvaluationPage() {
  const mayWrite = useCan('evaluation.write');
  const [params, setParams] = useSearchParams();
  const frozen = params.get('frozen') ?? '';
  const datasets = useInfiniteQuery({
    queryKey: ['evaluation-datasets', frozen],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      expectData(
        api.GET('/evaluation-datasets', {
          params: { query: { limit: 50, ...(frozen && { frozen: frozen as 'true' | 'false' }), ...(pageParam && { cursor: pageParam }) } },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const items = datasets.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Evaluation</h1>
      <div className="toolbar">
        <label htmlFor="datasets-frozen">Show</label>
        <select id="datasets-frozen" value={frozen} onChange={(e) => setParams(e.target.value ? { frozen: e.target.value } : {})}>
          <option value="">datasets and snapshots</option>
          <option value="false">editable datasets</option>
          <option value="true">frozen snapshots</option>
        </select>
      </div>
      {datasets.isPending && <Loading what="datasets" />}
      {datasets.isError && <ErrorMessage error={datasets.error} action="list the datasets" />}
      {datasets.isSuccess && items.length === 0 && (
        <Empty>No dataset{frozen ? ' matches' : ' yet: create one, import a CSV of questions, freeze it and run an agent on it'}.</Empty>
      )}
      {items.length > 0 && (
        <DataTable
          rows={items}
          rowKey={(dataset) => dataset.dataset_id}
          columns={[
            { header: 'Name', cell: (dataset) => <Link to={`/evaluation/${dataset.dataset_id}`}>{dataset.name}</Link> },
            { header: 'Task', cell: (dataset) => dataset.task_type },
            { header: 'Kind', cell: (dataset) => (dataset.frozen ? 'frozen snapshot' : 'editable') },
            { header: 'Items', cell: (dataset) => dataset.item_count },
            { header: 'Created', cell: (dataset) => <When at={dataset.created_at} /> },
          ]}
        />
      )}
      <ShowMore list={datasets} what="datasets" />
      {mayWrite && <NewDataset />}
    </>
  );
}
