/** Where an offset-paged list is, with Previous and Next while there is more on either side. */
export function Pager({
  offset,
  shown,
  total,
  pageSize,
  onChange,
}: {
  offset: number;
  shown: number;
  total: number;
  pageSize: number;
  onChange: (offset: number) => void;
}) {
  return (
    <div className="toolbar">
      <span className="muted">
        {offset + 1} to {offset + shown} of {total}
      </span>
      {offset > 0 && (
        <button type="button" className="secondary" onClick={() => onChange(Math.max(0, offset - pageSize))}>
          Previous
        </button>
      )}
      {offset + pageSize < total && (
        <button type="button" className="secondary" onClick={() => onChange(offset + pageSize)}>
          Next
        </button>
      )}
    </div>
  );
}
