import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, expectData } from '../api';
import { DataTable, When } from './data-table';
import { ErrorMessage, Loading } from './states';

/** A managed correction source's publication ledger: each correction published into it, newest first, with its indexing. */
export function CorrectionLedger({ sourceId }: { sourceId: string }) {
  const ledger = useQuery({
    queryKey: ['correction-ledger', sourceId],
    queryFn: () => expectData(api.GET('/knowledge-sources/{source_id}/corrections', { params: { path: { source_id: sourceId }, query: { limit: 50 } } })),
  });
  return (
    <section aria-labelledby="ledger-heading">
      <h2 id="ledger-heading">Published corrections</h2>
      {ledger.isPending && <Loading what="the publication ledger" />}
      {ledger.isError && <ErrorMessage error={ledger.error} action="read the publication ledger" />}
      {ledger.data && ledger.data.items.length === 0 && <p className="muted">Nothing published into this source yet.</p>}
      {ledger.data && ledger.data.items.length > 0 && (
        <DataTable
          compact
          caption="Publication ledger, newest first"
          rows={ledger.data.items}
          rowKey={(entry) => entry.publication_id}
          columns={[
            { header: 'When', cell: (entry) => <When at={entry.created_at} /> },
            { header: 'Question', cell: (entry) => entry.corrected_question },
            { header: 'Answer', cell: (entry) => entry.corrected_answer },
            { header: 'Revision', cell: (entry) => entry.revision_number },
            { header: 'Status', cell: (entry) => entry.status },
            { header: 'Indexing', cell: (entry) => entry.ingestion_job_status ?? '—' },
            {
              header: 'From',
              cell: (entry) => <Link to={`/sessions/${encodeURIComponent(entry.session_id)}`}>session {entry.session_id}</Link>,
            },
            { header: 'Error', cell: (entry) => entry.error_message ?? '' },
          ]}
        />
      )}
    </section>
  );
}
