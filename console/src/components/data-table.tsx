import type { ReactNode } from 'react';

/** One column: its header and what each row shows in it. */
export interface Column<Row> {
  header: string;
  cell: (row: Row) => ReactNode;
}

/** Rows as a table with a header row; `rowKey` keeps React's identity of each row across refetches. */
export function DataTable<Row>({
  rows,
  columns,
  rowKey,
  compact,
  caption,
}: {
  rows: Row[];
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
  compact?: boolean;
  caption?: string;
}) {
  return (
    <table className={compact ? 'compact' : undefined}>
      {caption && <caption>{caption}</caption>}
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column.header} scope="col">
              {column.header}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={rowKey(row)}>
            {columns.map((column) => (
              <td key={column.header}>{column.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A moment in the reader's locale, or a dash. */
export function When({ at }: { at: string | null | undefined }) {
  return at ? <time dateTime={at}>{new Date(at).toLocaleString()}</time> : '—';
}

/** A column of one button a row (an unmount, a revoke), present only when the user may use it. */
export function buttonColumn<Row>(allowed: boolean, header: string, label: (row: Row) => string, onClick: (row: Row) => void): Column<Row>[] {
  if (!allowed) return [];
  return [
    {
      header,
      cell: (row) => (
        <button type="button" className="secondary" onClick={() => onClick(row)} aria-label={label(row)}>
          {header}
        </button>
      ),
    },
  ];
}
