import { DataTable, type Column } from './data-table';
import { ListStates } from './states';

/** A page section listing one query's items: its heading, the list states, then the table. */
export function ListSection<Row>({
  id,
  title,
  caption,
  what,
  empty,
  query,
  rowKey,
  columns,
}: {
  id: string;
  title: string;
  caption: string;
  /** What the list holds, for its loading and error states ("past checks"). */
  what: string;
  empty: string;
  query: { isPending: boolean; isError: boolean; error: unknown; data?: { items: Row[] } };
  rowKey: (row: Row) => string;
  columns: Column<Row>[];
}) {
  const rows = query.data?.items;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <ListStates query={query} count={rows?.length} what={what} empty={empty} />
      {rows && rows.length > 0 && <DataTable compact caption={caption} rows={rows} rowKey={rowKey} columns={columns} />}
    </section>
  );
}
