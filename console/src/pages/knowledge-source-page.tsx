import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type ChangeEvent } from 'react';
import { useParams } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { ChunkingPreview } from '../components/chunking-preview';
import { CorrectionLedger } from '../components/correction-ledger';
import { DataTable, When } from '../components/data-table';
import { InspectRuns, inspectRunsKey } from '../components/inspect-runs';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';
import { uploadFile } from '../upload';

type Job = components['schemas']['IngestionJob'];
type Document = components['schemas']['KnowledgeDocument'];
type InspectRun = components['schemas']['InspectRunWithResults'];

// A job in any other state (queued, running, recovering) is polled until it ends.
const SETTLED_JOB = new Set<Job['status']>(['succeeded', 'partially_failed', 'failed']);
const POLL_MS = 1000;

function Progress({ value, label }: { value: number; label: string }) {
  return <progress max={1} value={value} aria-label={label} />;
}

/** Files chosen here are uploaded one after another, each with its own progress bar. */
function Uploads({ sourceId, onUploaded }: { sourceId: string; onUploaded: () => void }) {
  const [uploads, setUploads] = useState<{ name: string; progress: number; error?: ApiError; done?: boolean }[]>([]);
  async function upload(event: ChangeEvent<HTMLInputElement>) {
    const files = [...(event.target.files ?? [])];
    event.target.value = '';
    const first = uploads.length;
    setUploads((all) => [...all, ...files.map((file) => ({ name: file.name, progress: 0 }))]);
    for (const [i, file] of files.entries()) {
      const set = (change: Partial<(typeof uploads)[number]>) => setUploads((all) => all.map((u, j) => (j === first + i ? { ...u, ...change } : u)));
      try {
        await uploadFile<Document>(`/knowledge-sources/${sourceId}/documents`, file, (progress) => set({ progress }));
        set({ progress: 1, done: true });
        onUploaded();
      } catch (error) {
        set({ error: error as ApiError });
      }
    }
  }
  return (
    <section aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload</h2>
      <label htmlFor="upload-files">Documents to add</label> <input id="upload-files" type="file" multiple onChange={(e) => void upload(e)} />
      <ul className="uploads">
        {uploads.map((u, i) => (
          <li key={i}>
            {u.name} <Progress value={u.progress} label={`Upload of ${u.name}`} /> {u.done ? 'uploaded' : u.error ? '' : `${Math.round(u.progress * 100)} %`}
            {u.error && <ErrorMessage error={u.error} action={`upload ${u.name}`} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * One knowledge source: uploads with progress, its documents with their indexing and vector status, ingestion jobs
 * with live progress (polled each second while one runs), and a vector health check.
 */
export function KnowledgeSourcePage() {
  const sourceId = useParams().sourceId!;
  const mayWrite = useCan('knowledge.write');
  // The ledger shows the turns corrections came from: it needs conversations.read as well.
  const mayReadConversations = useCan('conversations.read');
  const queries = useQueryClient();
  const path = { params: { path: { source_id: sourceId } } };
  const source = useQuery({ queryKey: ['knowledge-source', sourceId], queryFn: () => expectData(api.GET('/knowledge-sources/{source_id}', path)) });
  const jobs = useQuery({
    queryKey: ['ingestion-jobs', sourceId],
    queryFn: () => expectData(api.GET('/knowledge-sources/{source_id}/ingestion-jobs', path)),
    refetchInterval: (query) => (query.state.data?.items.some((job: Job) => !SETTLED_JOB.has(job.status)) ? POLL_MS : false),
  });
  const running = jobs.data?.items.some((job) => !SETTLED_JOB.has(job.status)) ?? false;
  const documents = useQuery({
    queryKey: ['documents', sourceId],
    queryFn: () => expectData(api.GET('/knowledge-sources/{source_id}/documents', { params: { path: { source_id: sourceId }, query: { limit: 100 } } })),
    refetchInterval: running ? POLL_MS : false,
  });
  // A job that ends changes its documents' status after their last poll (a quick one ends between two polls, unseen
  // running): the documents and the source are read again whenever another job has ended.
  const endedJobs = jobs.data?.items
    .filter((job) => SETTLED_JOB.has(job.status))
    .map((job) => job.job_id)
    .join(',');
  const seenEndedJobs = useRef<string | undefined>(undefined);
  useEffect(() => {
    if (endedJobs === undefined) return;
    if (seenEndedJobs.current !== undefined && seenEndedJobs.current !== endedJobs) {
      void queries.invalidateQueries({ queryKey: ['documents', sourceId] });
      void queries.invalidateQueries({ queryKey: ['knowledge-source', sourceId] });
    }
    seenEndedJobs.current = endedJobs;
  }, [endedJobs, queries, sourceId]);
  const ingest = useMutation<unknown, ApiError>({
    mutationFn: () => expectData(api.POST('/knowledge-sources/{source_id}/ingest', { ...path, body: {} })),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['ingestion-jobs', sourceId] }),
  });
  const inspect = useMutation<InspectRun, ApiError>({
    mutationFn: () => expectData(api.POST('/knowledge-sources/{source_id}/inspect-runs', { ...path, body: { inspection_mode: 'vector_health' } })),
    onSuccess: () => queries.invalidateQueries({ queryKey: inspectRunsKey(sourceId) }),
  });

  if (source.isPending) return <Loading what="the source" />;
  if (source.isError) return <ErrorMessage error={source.error} action="read the source" />;
  const docs = documents.data?.items ?? [];
  return (
    <>
      <h1>{source.data.name}</h1>
      <p className="muted">
        {source.data.source_kind} · chunking {source.data.chunking_strategy} · {source.data.document_count} documents
      </p>
      {mayWrite && (
        <Uploads
          sourceId={sourceId}
          onUploaded={() => {
            void queries.invalidateQueries({ queryKey: ['documents', sourceId] });
            void queries.invalidateQueries({ queryKey: ['knowledge-source', sourceId] });
          }}
        />
      )}

      <section aria-labelledby="documents-heading">
        <h2 id="documents-heading">Documents</h2>
        {mayWrite && (
          <div className="toolbar">
            <button type="button" onClick={() => ingest.mutate()} disabled={ingest.isPending || running}>
              Index new documents
            </button>
            <button type="button" className="secondary" onClick={() => inspect.mutate()} disabled={inspect.isPending}>
              Check vector health
            </button>
          </div>
        )}
        {ingest.error && <ErrorMessage error={ingest.error} action="start the ingestion" />}
        {inspect.error && <ErrorMessage error={inspect.error} action="check the vectors" />}
        {inspect.data && (
          <p role="status">
            Vector health: {inspect.data.status}.{' '}
            {Object.entries(inspect.data.summary ?? {})
              .map(([name, value]) => `${name.replaceAll('_', ' ')} ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`)
              .join(' · ')}
          </p>
        )}
        {documents.isPending && <Loading what="documents" />}
        {documents.isError && <ErrorMessage error={documents.error} action="list the documents" />}
        {documents.isSuccess && docs.length === 0 && <Empty>No documents yet{mayWrite ? ': upload some above.' : '.'}</Empty>}
        {docs.length > 0 && (
          <DataTable
            compact
            rows={docs}
            rowKey={(doc) => doc.document_id}
            columns={[
              { header: 'File', cell: (doc) => doc.filename },
              { header: 'Status', cell: (doc) => doc.status },
              { header: 'Vectors', cell: (doc) => doc.vector_status },
              { header: 'Points', cell: (doc) => `${doc.actual_point_count ?? '—'} / ${doc.expected_point_count ?? '—'}` },
              { header: 'Size', cell: (doc) => `${Math.ceil(doc.size_bytes / 1024)} KiB` },
              { header: 'Error', cell: (doc) => doc.error_message ?? '' },
            ]}
          />
        )}
      </section>

      <section aria-labelledby="jobs-heading">
        <h2 id="jobs-heading">Ingestion jobs</h2>
        {jobs.isError && <ErrorMessage error={jobs.error} action="list the ingestion jobs" />}
        {jobs.data && jobs.data.items.length === 0 && <p className="muted">No ingestion yet.</p>}
        {jobs.data && jobs.data.items.length > 0 && (
          <DataTable
            compact
            rows={jobs.data.items}
            rowKey={(job) => job.job_id}
            columns={[
              { header: 'Started', cell: (job) => <When at={job.started_at ?? job.created_at} /> },
              { header: 'Status', cell: (job) => job.status },
              {
                header: 'Progress',
                cell: (job) => (
                  <>
                    <Progress value={job.documents_total ? job.documents_done / job.documents_total : 0} label={`Job ${job.job_id}`} /> {job.documents_done} of{' '}
                    {job.documents_total}
                    {job.documents_failed ? `, ${job.documents_failed} failed` : ''}
                  </>
                ),
              },
              { header: 'Error', cell: (job) => job.error_message ?? '' },
            ]}
          />
        )}
      </section>
      {mayWrite && <ChunkingPreview sourceId={sourceId} />}
      <InspectRuns sourceId={sourceId} />
      {source.data.source_kind === 'managed_correction' && mayReadConversations && <CorrectionLedger sourceId={sourceId} />}
    </>
  );
}
