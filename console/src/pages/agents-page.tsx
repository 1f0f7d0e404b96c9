import { useInfiniteQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api, expectData } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

const PAGE = 50;

/** Every agent, a page at a time (the list's cursor), newest first as the host sends them. */
export function AgentsPage() {
  const mayCreate = useCan('agents.write');
  const agents = useInfiniteQuery({
    queryKey: ['agents'],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => expectData(api.GET('/agents', { params: { query: { limit: PAGE, ...(pageParam && { cursor: pageParam }) } } })),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const items = agents.data?.pages.flatMap((page) => page.items) ?? [];

  return (
    <>
      <div className="title-row">
        <h1>Agents</h1>
        {mayCreate && (
          <Link className="button" to="/agents/new">
            New agent
          </Link>
        )}
      </div>
      {agents.isPending && <Loading what="agents" />}
      {agents.isError && <ErrorMessage error={agents.error} action="list the agents" />}
      {agents.isSuccess && items.length === 0 && (
        <Empty>
          <p>No agents yet.</p>
          {mayCreate && <Link to="/agents/new">Create the first one</Link>}
        </Empty>
      )}
      {items.length > 0 && (
        <DataTable
          rows={items}
          rowKey={(agent) => agent.agent_id}
          columns={[
            { header: 'Name', cell: (agent) => <Link to={`/agents/${agent.agent_id}`}>{agent.name}</Link> },
            { header: 'Type', cell: (agent) => agent.agent_type },
            { header: 'Status', cell: (agent) => agent.status },
            { header: 'Access', cell: (agent) => agent.public_access_mode },
            { header: 'Model', cell: (agent) => (agent.model_name ? `${agent.model_provider ?? ''} ${agent.model_name}`.trim() : '—') },
            { header: 'Updated', cell: (agent) => <When at={agent.updated_at} /> },
          ]}
        />
      )}
      <ShowMore list={agents} what="agents" />
    </>
  );
}
