import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, expectData } from '../api';
import { When } from './data-table';
import { ListSection } from './list-section';

/** A managed correction source's publication ledger: each correction published into it, newest first, with its indexing. */
export function CorrectionLedger({ sourceId }: { sourceId: string }) {
  const ledger = useQuery({
    queryKey: ['correction-ledger', sourceId],
    queryFn: () => expectData(api.GET('/knowledge-sources/{source_id}/corrections', { params: { path: { source_id: sourceId }, query: { limit: 50 } } })),
  });
  return (
    <ListSection
      id="ledger-heading"
      title="Published corrections"
      caption="Publication ledger, newest first"
      what="published corrections"
      empty="Nothing published into this source yet."
      query={ledger}
      rowKey={(entry) => entry.publication_id}
      columns={[
        { header: 'When', cell: (entry) => <When at={entry.created_at} /> },
        { header: 'Question', cell: (entry) => entry.corrected_question },
        { header: 'Answer', cell: (entry) => entry.corrected_answer },
        { header: 'Revision', cell: (entry) => entry.revision_number },
        { header: 'Status', cell: (entry) => entry.status },
        { header: 'Indexing', cell: (entry) => entry.ingestion_job_status ?? '—' },
        { header: 'From', cell: (entry) => <Link to={`/sessions/${encodeURIComponent(entry.session_id)}`}>session {entry.session_id}</Link> },
        { header: 'Error', cell: (entry) => entry.error_message ?? '' },
      ]}
    />
  );
}
