import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, expectData } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';

const PAGE = 50;

/** Conversations, most recent first, by agent and by words in them; each opens its live transcript. */
export function SessionsPage() {
  const [params, setParams] = useSearchParams();
  const agentId = params.get('agent') ?? '';
  const q = params.get('q') ?? '';
  const [words, setWords] = useState(q);
  const agents = useQuery({ queryKey: ['agents', 'all'], queryFn: () => expectData(api.GET('/agents', { params: { query: { limit: 100 } } })) });
  const sessions = useInfiniteQuery({
    queryKey: ['sessions', agentId, q],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      expectData(
        api.GET('/sessions', {
          params: { query: { limit: PAGE, ...(agentId && { agent_id: agentId }), ...(q && { q }), ...(pageParam && { cursor: pageParam }) } },
        }),
      ),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
    // A session that asks for a person, or one another operator takes, shows up without a reload.
    refetchInterval: 10_000,
  });
  const filter = (next: { agent?: string; q?: string }) => {
    const merged = { agent: agentId, q, ...next };
    setParams(Object.fromEntries(Object.entries(merged).filter(([, value]) => value)));
  };
  const search = (event: FormEvent) => {
    event.preventDefault();
    filter({ q: words.trim() });
  };
  const items = sessions.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      <h1>Sessions</h1>
      <form className="toolbar" onSubmit={search} role="search">
        <label htmlFor="sessions-agent">Agent</label>
        <select id="sessions-agent" value={agentId} onChange={(e) => filter({ agent: e.target.value })}>
          <option value="">All agents</option>
          {agents.data?.items.map((agent) => (
            <option key={agent.agent_id} value={agent.agent_id}>
              {agent.name}
            </option>
          ))}
        </select>
        <label htmlFor="sessions-q">Words</label>
        <input id="sessions-q" type="search" value={words} onChange={(e) => setWords(e.target.value)} />
        <button type="submit">Search</button>
      </form>
      {sessions.isPending && <Loading what="sessions" />}
      {sessions.isError && <ErrorMessage error={sessions.error} action="list the sessions" />}
      {sessions.isSuccess && items.length === 0 && (
        <Empty>
          <p>{agentId || q ? 'No session matches.' : 'No sessions yet.'}</p>
        </Empty>
      )}
      {items.length > 0 && (
        <DataTable
          rows={items}
          rowKey={(session) => session.session_id}
          columns={[
            { header: 'Session', cell: (session) => <Link to={`/sessions/${encodeURIComponent(session.session_id)}`}>{session.session_id}</Link> },
            { header: 'Agent', cell: (session) => session.agent_name ?? '—' },
            {
              header: 'Status',
              cell: (session) =>
                session.status === 'HUMAN_ACTIVE' ? (
                  <span className="badge guard-warning">with {session.takeover_owner_name ?? 'an operator'}</span>
                ) : session.handoff_requested_at ? (
                  <span className="badge guard-failed" title={`since ${new Date(session.handoff_requested_at).toLocaleString()}`}>
                    AI, asks for a person
                  </span>
                ) : (
                  <span className="badge guard-ok">AI</span>
                ),
            },
            { header: 'Updated', cell: (session) => <When at={session.updated_at} /> },
          ]}
        />
      )}
      <ShowMore list={sessions} what="sessions" />
    </>
  );
}
