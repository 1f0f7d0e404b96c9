import { BadRequestError } from '@agent-host/sdk';

/** An opaque keyset cursor over (time, id), for lists ordered by creation. */
export const encodeCursor = (at: Date, id: string) => Buffer.from(JSON.stringify([at.toISOString(), id])).toString('base64url');

/** The (time, id) of a cursor, `[null, null]` for the first page; a malformed cursor is a 400. */
export function decodeCursor(cursor: string | undefined): [string, string] | [null, null] {
  if (!cursor) return [null, null];
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    if (typeof at === 'string' && typeof id === 'string' && !Number.isNaN(Date.parse(at))) return [at, id];
  } catch {
    // fall through
  }
  throw new BadRequestError('cursor is not valid; start from the first page');
}

/** The `{items, next_cursor, limit}` envelope of a page read newest first with `limit + 1` rows. */
export function keysetPage<R extends { created_at: Date; id: string }, T>(rows: R[], limit: number, present: (row: R) => T) {
  const page = rows.slice(0, limit);
  return { items: page.map(present), next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.created_at, page.at(-1)!.id) : null, limit };
}
