import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { components } from '@agent-host/client';
import { useAgentsOfType } from '../agents-of-type';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, IssueList, ListStates, Loading } from '../components/states';
import { useCan } from '../session';
import { useUpload } from '../upload';

type RuntimeAgent = components['schemas']['RuntimeAgent'];
type Run = components['schemas']['DocumentRecognitionRun'];

const STATUSES = ['queued', 'running', 'recovering', 'succeeded', 'failed'] as const;
const REVIEW_STATES = ['not_started', 'in_progress', 'reviewed'] as const;

/** Counts by status and review progress, from the admin overview. */
function Overview() {
  const overview = useQuery({ queryKey: ['recognition-overview'], queryFn: () => expectData(api.GET('/admin/document-recognition/overview')) });
  if (overview.isPending) return <Loading what="the overview" />;
  if (overview.isError) return <ErrorMessage error={overview.error} action="read the overview" />;
  const counts = (record: Record<string, number>) =>
    Object.entries(record)
      .map(([name, count]) => `${count} ${name.replaceAll('_', ' ')}`)
      .join(', ') || 'none';
  return (
    <dl className="facts">
      <dt>Runs</dt>
      <dd>
        {overview.data.run_count}: {counts(overview.data.by_status)}
      </dd>
      <dt>Review</dt>
      <dd>{counts(overview.data.review_progress)}</dd>
      <dt>Runtime agents</dt>
      <dd>{overview.data.runtime_agent_count}</dd>
    </dl>
  );
}

/**
 * The registered runtime agents (published fusion agents that extract a document's fields): each with its upload
 * types and fields, or why it takes no runs now; register another fusion agent, or remove one (its runs stay).
 */
function RuntimeAgents({
  agents,
  mayWrite,
}: {
  agents: { isPending: boolean; isError: boolean; error: unknown; data?: { items: RuntimeAgent[] } };
  mayWrite: boolean;
}) {
  const queries = useQueryClient();
  const fusionAgents = useAgentsOfType('fusion');
  const [agentId, setAgentId] = useState('');
  const refresh = () => queries.invalidateQueries({ queryKey: ['runtime-agents'] });
  const register = useMutation<unknown, ApiError>({
    mutationFn: () => expectData(api.PUT('/admin/document-recognition/runtime-agents/{agent_id}', { params: { path: { agent_id: agentId } } })),
    onSuccess: async () => {
      setAgentId('');
      await refresh();
    },
  });
  const remove = useMutation<unknown, ApiError, string>({
    mutationFn: async (id) => {
      const { response, error } = await api.DELETE('/admin/document-recognition/runtime-agents/{agent_id}', { params: { path: { agent_id: id } } });
      if (!response.ok) throw error as ApiError;
    },
    onSuccess: refresh,
  });
  const registered = new Set(agents.data?.items.map((a) => a.agent_id));
  const offered = (fusionAgents.data ?? []).filter((a) => !registered.has(a.agent_id));
  return (
    <section aria-labelledby="runtime-agents-heading">
      <h2 id="runtime-agents-heading">Runtime agents</h2>
      <ListStates query={agents} count={agents.data?.items.length} what="runtime agents" empty="No runtime agent registered yet." />
      {agents.data && agents.data.items.length > 0 && (
        <DataTable
          compact
          rows={agents.data.items}
          rowKey={(a) => a.runtime_agent_id}
          columns={[
            { header: 'Agent', cell: (a) => <Link to={`/agents/${a.agent_id}`}>{a.name}</Link> },
            { header: 'State', cell: (a) => (a.available ? 'available' : `unavailable: ${a.unavailable_reason ?? ''}`) },
            { header: 'Takes', cell: (a) => a.upload_slot?.accepted_content_types.join(', ') ?? '—' },
            { header: 'Fields', cell: (a) => a.output_slot?.fields.map((f) => f.label).join(', ') ?? '—' },
            { header: 'Registered', cell: (a) => <When at={a.registered_at} /> },
            ...(mayWrite
              ? [
                  {
                    header: 'Remove',
                    cell: (a: RuntimeAgent) => (
                      <button type="button" className="secondary" onClick={() => remove.mutate(a.agent_id)} aria-label={`Remove ${a.name}`}>
                        Remove
                      </button>
                    ),
                  },
                ]
              : []),
          ]}
        />
      )}
      {remove.error && <ErrorMessage error={remove.error} action="remove the runtime agent" />}
      {mayWrite && offered.length > 0 && (
        <form
          className="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            if (agentId) register.mutate();
          }}
          aria-label="Register a runtime agent"
        >
          <label htmlFor="register-agent">Fusion agent</label>
          <select id="register-agent" value={agentId} onChange={(e) => setAgentId(e.target.value)}>
            <option value="">Choose a published fusion agent</option>
            {offered.map((a) => (
              <option key={a.agent_id} value={a.agent_id}>
                {a.name}
              </option>
            ))}
          </select>
          <button type="submit" disabled={!agentId || register.isPending}>
            Register
          </button>
        </form>
      )}
      {register.error && (
        <>
          <ErrorMessage error={register.error} action="register the agent" />
          <IssueList error={register.error} skip={2} />
        </>
      )}
    </section>
  );
}

/** A document uploaded to an available runtime agent, with a progress bar; the new run's page opens. */
function Upload({ agents }: { agents: RuntimeAgent[] }) {
  const available = agents.filter((a) => a.available);
  const [agentId, setAgentId] = useState('');
  const [file, setFile] = useState<File>();
  const { progress, error, send } = useUpload();
  const navigate = useNavigate();
  const chosen = agentId || available[0]?.runtime_agent_id || '';
  const accept = available.find((a) => a.runtime_agent_id === chosen)?.upload_slot?.accepted_content_types.join(',');
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (!file || !chosen) return;
    const form = new FormData();
    form.append('runtime_agent_id', chosen);
    form.append('file', file);
    const run = await send<Run>('/document-recognition/runs', form);
    if (run) await navigate(`/documents/${run.run_id}`);
  }
  if (available.length === 0) return null;
  return (
    <form className="form" onSubmit={(e) => void submit(e)} aria-label="Upload a document">
      <h2>Upload a document</h2>
      <label htmlFor="upload-agent">Runtime agent</label>
      <select id="upload-agent" value={chosen} onChange={(e) => setAgentId(e.target.value)}>
        {available.map((a) => (
          <option key={a.runtime_agent_id} value={a.runtime_agent_id}>
            {a.name}
          </option>
        ))}
      </select>
      <label htmlFor="upload-document">Document</label>
      <input id="upload-document" type="file" accept={accept || undefined} onChange={(e) => setFile(e.target.files?.[0])} />
      {progress !== undefined && <progress max={1} value={progress} aria-label="Upload of the document" />}
      {error && <ErrorMessage error={error} action="upload the document" />}
      <button type="submit" disabled={!file || progress !== undefined}>
        Recognize
      </button>
    </form>
  );
}

/** Document recognition: the overview, runtime agents, an upload, and every run by status and review state. */
export function DocumentsPage() {
  const mayWrite = useCan('document_recognition.write');
  const [params, setParams] = useSearchParams();
  const status = (params.get('status') ?? '') as (typeof STATUSES)[number] | '';
  const review = (params.get('review') ?? '') as (typeof REVIEW_STATES)[number] | '';
  const agents = useQuery({ queryKey: ['runtime-agents'], queryFn: () => expectData(api.GET('/admin/document-recognition/runtime-agents')) });
  const runs = useInfiniteQuery({
    queryKey: ['recognition-runs', status, review],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      expectData(
        api.GET('/admin/document-recognition/runs', {
          params: { query: { limit: 50, ...(status && { status }), ...(review && { review_state: review }), ...(pageParam && { cursor: pageParam }) } },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const set = (next: Record<string, string>) => setParams(Object.fromEntries(Object.entries({ status, review, ...next }).filter(([, v]) => v)));
  const items = runs.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Documents</h1>
      <Overview />
      <RuntimeAgents agents={agents} mayWrite={mayWrite} />
      {agents.data && <Upload agents={agents.data.items} />}
      <section aria-labelledby="runs-heading">
        <h2 id="runs-heading">Runs</h2>
        <div className="toolbar">
          <label htmlFor="runs-status">Status</label>
          <select id="runs-status" value={status} onChange={(e) => set({ status: e.target.value })}>
            <option value="">Any</option>
            {STATUSES.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
          <label htmlFor="runs-review">Review</label>
          <select id="runs-review" value={review} onChange={(e) => set({ review: e.target.value })}>
            <option value="">Any</option>
            {REVIEW_STATES.map((s) => (
              <option key={s} value={s}>
                {s.replace('_', ' ')}
              </option>
            ))}
          </select>
        </div>
        {runs.isPending && <Loading what="runs" />}
        {runs.isError && <ErrorMessage error={runs.error} action="list the runs" />}
        {runs.isSuccess && items.length === 0 && <Empty>No run{status || review ? ' matches' : ' yet: upload a document above'}.</Empty>}
        {items.length > 0 && (
          <DataTable
            rows={items}
            rowKey={(run) => run.run_id}
            columns={[
              { header: 'Document', cell: (run) => <Link to={`/documents/${run.run_id}`}>{run.source_filename}</Link> },
              { header: 'Runtime agent', cell: (run) => run.runtime_agent_name },
              { header: 'Status', cell: (run) => run.status },
              { header: 'Review', cell: (run) => `${run.review_state.replace('_', ' ')} (${run.reviewed_field_count} of ${run.field_count})` },
              { header: 'Pages', cell: (run) => run.page_count ?? '—' },
              { header: 'Uploaded', cell: (run) => <When at={run.created_at} /> },
            ]}
          />
        )}
        <ShowMore list={runs} what="runs" />
      </section>
    </>
  );
}
