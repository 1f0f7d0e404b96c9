import type { ReactNode } from 'react';
import type { ApiError } from '../api';

/** What a page shows while its data loads. */
export function Loading({ what }: { what: string }) {
  return (
    <p role="status" aria-live="polite" className="muted">
      Loading {what}…
    </p>
  );
}

/** What a list shows when it has nothing, with what the user can do about it. */
export function Empty({ children }: { children: ReactNode }) {
  return <div className="empty">{children}</div>;
}

/** A failed call, in the host's own words (its `message`), with the code and request id to quote to an operator. */
export function ErrorMessage({ error, action }: { error: unknown; action: string }) {
  const known = error as Partial<ApiError> | undefined;
  const message = known?.message ?? (error instanceof Error ? error.message : String(error));
  return (
    <div role="alert" className="error">
      <strong>Could not {action}:</strong> {message}
      {known?.code && (
        <small>
          {' '}
          ({known.code}
          {known.request_id ? `, request ${known.request_id}` : ''})
        </small>
      )}
    </div>
  );
}

/** A list's loading, error and empty states, from its query; renders nothing once it has items. */
export function ListStates({
  query,
  count,
  what,
  empty,
}: {
  query: { isPending: boolean; isError: boolean; error: unknown };
  count: number | undefined;
  what: string;
  empty: string;
}) {
  if (query.isPending) return <Loading what={what} />;
  if (query.isError) return <ErrorMessage error={query.error} action={`list the ${what}`} />;
  return count === 0 ? <p className="muted">{empty}</p> : null;
}

/** A 422's issues, one line each: where (the path after `skip` leading parts, such as "body") and what is wrong. */
export function IssueList({ error, skip = 1 }: { error: ApiError; skip?: number }) {
  if (!error.errors?.length) return null;
  return (
    <ul className="field-error">
      {error.errors.map((issue, i) => {
        const where = issue.loc.slice(skip).join(', ');
        return <li key={i}>{where ? `${where}: ${issue.msg}` : issue.msg}</li>;
      })}
    </ul>
  );
}
