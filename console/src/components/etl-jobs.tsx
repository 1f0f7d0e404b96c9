import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData } from '../api';
import { useUpload } from '../upload';
import { DataTable, When } from './data-table';
import { ErrorMessage, ListStates } from './states';

type EtlJob = components['schemas']['EtlJob'];

const POLL_MS = 1000;
const ENDED = new Set(['succeeded', 'failed']);

/** A link to one of a job's files, when the host offers it. */
function Download({ url, label }: { url: string | null | undefined; label: string }) {
  return url ? <a href={url}>{label}</a> : null;
}

/**
 * An ETL agent's jobs: a source CSV and a target-schema CSV (and instructions) uploaded with progress, each job's rows
 * followed while it runs, its report counts, and its files to download (the output once it succeeded).
 */
export function EtlJobs({ agentId, mayWrite }: { agentId: string; mayWrite: boolean }) {
  const queries = useQueryClient();
  const [source, setSource] = useState<File>();
  const [schema, setSchema] = useState<File>();
  const [instructions, setInstructions] = useState('');
  const { progress, error, send } = useUpload();
  const jobs = useQuery({
    queryKey: ['etl-jobs', agentId],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/etl-jobs', { params: { path: { agent_id: agentId } } })),
    refetchInterval: (query) => (query.state.data?.items.some((job: EtlJob) => !ENDED.has(job.status)) ? POLL_MS : false),
  });

  async function start(event: FormEvent) {
    event.preventDefault();
    if (!source || !schema) return;
    const form = new FormData();
    form.append('source_csv', source);
    form.append('target_schema_csv', schema);
    if (instructions) form.append('instructions', instructions);
    if (await send<EtlJob>(`/agents/${agentId}/etl-jobs`, form)) await queries.invalidateQueries({ queryKey: ['etl-jobs', agentId] });
  }

  return (
    <section aria-labelledby="etl-heading">
      <h2 id="etl-heading">ETL jobs</h2>
      {mayWrite && (
        <form className="form" onSubmit={(e) => void start(e)} aria-label="New ETL job">
          <label htmlFor="etl-source">Source CSV</label>
          <input id="etl-source" type="file" accept=".csv,text/csv" onChange={(e) => setSource(e.target.files?.[0])} />
          <label htmlFor="etl-schema">Target schema CSV</label>
          <input id="etl-schema" type="file" accept=".csv,text/csv" onChange={(e) => setSchema(e.target.files?.[0])} />
          <label htmlFor="etl-instructions">Instructions</label>
          <textarea id="etl-instructions" value={instructions} onChange={(e) => setInstructions(e.target.value)} />
          {progress !== undefined && <progress max={1} value={progress} aria-label="Upload of the ETL files" />}
          {error && <ErrorMessage error={error} action="start the job" />}
          <button type="submit" disabled={!source || !schema || progress !== undefined}>
            Start job
          </button>
        </form>
      )}
      <ListStates query={jobs} count={jobs.data?.items.length} what="ETL jobs" empty="No ETL job yet." />
      {jobs.data && jobs.data.items.length > 0 && (
        <DataTable
          compact
          rows={jobs.data.items}
          rowKey={(job) => job.job_id}
          columns={[
            { header: 'Started', cell: (job) => <When at={job.created_at} /> },
            { header: 'Source', cell: (job) => job.source_filename },
            { header: 'Status', cell: (job) => `${job.status}${job.heartbeat_stale ? ' (heartbeat stale)' : ''}` },
            {
              header: 'Rows',
              cell: (job) => (
                <>
                  <progress max={1} value={job.rows_total ? job.rows_done / job.rows_total : 0} aria-label={`Rows of ${job.source_filename}`} /> {job.rows_done}{' '}
                  of {job.rows_total ?? '?'}
                </>
              ),
            },
            {
              header: 'Report',
              cell: (job) =>
                job.report
                  ? `${job.report.rows_written} written, ${job.report.rows_rejected} rejected, ${job.report.cells_coerced} cells coerced`
                  : (job.error?.message ?? ''),
            },
            {
              header: 'Files',
              cell: (job) => (
                <span className="toolbar">
                  <Download url={job.download_url} label="Output" />
                  <Download url={job.report_download_url} label="Report" />
                  <Download url={job.source_download_url} label="Source" />
                  <Download url={job.target_schema_download_url} label="Schema" />
                </span>
              ),
            },
          ]}
        />
      )}
    </section>
  );
}
