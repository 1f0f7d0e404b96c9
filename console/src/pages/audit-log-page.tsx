import { useInfiniteQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useSearchParams } from 'react-router';
import { api, expectData } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';

const OUTCOMES = ['success', 'failure', 'denied'] as const;
type Outcome = (typeof OUTCOMES)[number];

/** The audit log, newest first, by action (exact, or a prefix ending in `.*`) and outcome. */
export function AuditLogPage() {
  const [params, setParams] = useSearchParams();
  const action = params.get('action') ?? '';
  const outcome = (params.get('outcome') ?? '') as Outcome | '';
  const [typed, setTyped] = useState(action);
  const entries = useInfiniteQuery({
    queryKey: ['audit-logs', action, outcome],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      expectData(
        api.GET('/admin/audit-logs', {
          params: { query: { limit: 50, ...(action && { action }), ...(outcome && { outcome }), ...(pageParam && { cursor: pageParam }) } },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const filter = (next: { action?: string; outcome?: string }) =>
    setParams(Object.fromEntries(Object.entries({ action, outcome, ...next }).filter(([, value]) => value)));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    filter({ action: typed.trim() });
  };
  const items = entries.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      <h1>Audit log</h1>
      <form className="toolbar" role="search" onSubmit={submit}>
        <label htmlFor="audit-action">Action</label>
        <input id="audit-action" placeholder="admin_users.*" value={typed} onChange={(e) => setTyped(e.target.value)} />
        <label htmlFor="audit-outcome">Outcome</label>
        <select id="audit-outcome" value={outcome} onChange={(e) => filter({ outcome: e.target.value })}>
          <option value="">Any</option>
          {OUTCOMES.map((o) => (
            <option key={o}>{o}</option>
          ))}
        </select>
        <button type="submit">Filter</button>
      </form>
      {entries.isPending && <Loading what="the audit log" />}
      {entries.isError && <ErrorMessage error={entries.error} action="read the audit log" />}
      {entries.isSuccess && items.length === 0 && <Empty>No entry matches.</Empty>}
      {items.length > 0 && (
        <DataTable
          compact
          rows={items}
          rowKey={(entry) => String(entry.id)}
          columns={[
            { header: 'When', cell: (entry) => <When at={entry.created_at} /> },
            { header: 'Action', cell: (entry) => entry.action },
            { header: 'Outcome', cell: (entry) => entry.outcome },
            { header: 'Actor', cell: (entry) => entry.actor_id ?? '—' },
            { header: 'Target', cell: (entry) => (entry.target_type ? `${entry.target_type} ${entry.target_id ?? ''}` : '—') },
            { header: 'Address', cell: (entry) => entry.client_ip ?? '—' },
          ]}
        />
      )}
      <ShowMore list={entries} what="entries" />
    </>
  );
}
