import type { UseInfiniteQueryResult } from '@tanstack/react-query';
import { ErrorMessage } from './states';

/** The next page of a cursor-paged list, on request; a failed page says so without losing the ones shown. */
export function ShowMore({ list, what }: { list: UseInfiniteQueryResult; what: string }) {
  return (
    <>
      {list.hasNextPage && (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? 'Loading…' : 'Show more'}
        </button>
      )}
      {list.isFetchNextPageError && <ErrorMessage error={list.error} action={`load more ${what}`} />}
    </>
  );
}
