import { useQuery } from '@tanstack/react-query';
import { api, expectData } from '../api';
import { DataTable, When } from './data-table';
import { ErrorMessage, Loading } from './states';

/** The query key of a source's inspect runs: a new check or preview refreshes the list through it. */
export const inspectRunsKey = (sourceId: string) => ['inspect-runs', sourceId];

/** A knowledge source's past checks (vector health, chunking previews), newest first, with what each found. */
export function InspectRuns({ sourceId }: { sourceId: string }) {
  const runs = useQuery({
    queryKey: inspectRunsKey(sourceId),
    queryFn: () => expectData(api.GET('/knowledge-sources/{source_id}/inspect-runs', { params: { path: { source_id: sourceId }, query: { limit: 20 } } })),
  });
  return (
    <section aria-labelledby="inspect-runs-heading">
      <h2 id="inspect-runs-heading">Past checks</h2>
      {runs.isPending && <Loading what="past checks" />}
      {runs.isError && <ErrorMessage error={runs.error} action="list the past checks" />}
      {runs.data && runs.data.items.length === 0 && <p className="muted">No check or chunking preview yet.</p>}
      {runs.data && runs.data.items.length > 0 && (
        <DataTable
          compact
          caption="The last 20 checks and chunking previews"
          rows={runs.data.items}
          rowKey={(run) => run.run_id}
          columns={[
            { header: 'When', cell: (run) => <When at={run.created_at} /> },
            {
              header: 'Kind',
              cell: (run) => (run.inspection_mode === 'vector_health' ? 'vector health' : `chunking preview (${run.candidate_chunking_strategy ?? 'current'})`),
            },
            { header: 'Status', cell: (run) => run.status },
            {
              header: 'Found',
              cell: (run) =>
                Object.entries(run.summary)
                  .map(([name, count]) => `${name.replaceAll('_', ' ')} ${count}`)
                  .join(' · '),
            },
            { header: 'Error', cell: (run) => run.error_message ?? '' },
          ]}
        />
      )}
    </section>
  );
}
