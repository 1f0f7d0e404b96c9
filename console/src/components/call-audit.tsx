import { DataTable, type Column } from './data-table';
import { ListStates } from './states';

/** An agent's last calls of one kind (MCP tools, skills) under a mount section: list states, then the table. */
export function CallAudit<Call>({
  caption,
  empty,
  query,
  rowKey,
  columns,
}: {
  caption: string;
  empty: string;
  query: { isPending: boolean; isError: boolean; error: unknown; data?: { items: Call[] } };
  rowKey: (call: Call) => string;
  columns: Column<Call>[];
}) {
  const calls = query.data?.items;
  return (
    <>
      <h3>Last calls</h3>
      <ListStates query={query} count={calls?.length} what={caption} empty={empty} />
      {calls && calls.length > 0 && <DataTable compact caption={caption} rows={calls} rowKey={rowKey} columns={columns} />}
    </>
  );
}
