import type { ReactNode } from 'react';
import { DataTable, type Column } from './data-table';
import { ListStates } from './states';

/** An agent page's section of mounts (knowledge, tools, skills): its heading, list states, table, then its forms. */
export function MountSection<Mount extends { mount_id: string }>({
  id,
  title,
  query,
  what,
  empty,
  columns,
  children,
}: {
  id: string;
  title: string;
  query: { isPending: boolean; isError: boolean; error: unknown; data?: { items: Mount[] } };
  what: string;
  empty: string;
  columns: Column<Mount>[];
  children?: ReactNode;
}) {
  const mounts = query.data?.items;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      <ListStates query={query} count={mounts?.length} what={what} empty={empty} />
      {mounts && mounts.length > 0 && <DataTable compact rows={mounts} rowKey={(m) => m.mount_id} columns={columns} />}
      {children}
    </section>
  );
}
