import { useQuery } from '@tanstack/react-query';
import { api, expectData } from '../api';
import { When } from './data-table';
import { ListSection } from './list-section';

/** The query key of a source's inspect runs: a new check or preview refreshes the list through it. */
export const inspectRunsKey = (sourceId: string) => ['inspect-runs', sourceId];

/** A knowledge source's past checks (vector health, chunking previews), newest first, with what each found. */
export function InspectRuns({ sourceId }: { sourceId: string }) {
  const runs = useQuery({
    queryKey: inspectRunsKey(sourceId),
    queryFn: () => expectData(api.GET('/knowledge-sources/{source_id}/inspect-runs', { params: { path: { source_id: sourceId }, query: { limit: 20 } } })),
  });
  return (
    <ListSection
      id="inspect-runs-heading"
      title="Past checks"
      caption="The last 20 checks and chunking previews"
      what="past checks"
      empty="No check or chunking preview yet."
      query={runs}
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
  );
}
