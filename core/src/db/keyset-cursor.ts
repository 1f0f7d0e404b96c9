import { BadRequestError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';

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
  throw new BadRequestError('cursor is not valid; start from the first page', { code: 'CURSOR_INVALID' });
}

/** The `{items, next_cursor, limit}` envelope of a page read newest first with `limit + 1` rows. */
export function keysetPage<R extends { created_at: Date; id: string }, T>(rows: R[], limit: number, present: (row: R) => T) {
  const page = rows.slice(0, limit);
  return { items: page.map(present), next_cursor: rows.length > limit ? encodeCursor(page.at(-1)!.created_at, page.at(-1)!.id) : null, limit };
}

/**
 * One page `{items, next_cursor, limit}` of `SELECT <select> FROM <from> AS r
 * WHERE <where>`, newest first, keyset on `(r.created_at, r.id)`; `where` may
 * use `$1..$n` of `bind`. `from` and `where` come from code, never from a request.
 */
export async function newestFirst<R extends { id: string; created_at: Date }, T>(
  db: Sequelize,
  query: { select?: string; from: string; where: string; bind: unknown[] },
  options: { limit: number; cursor?: string },
  present: (row: R) => T | Promise<T>,
) {
  const [cursorAt, cursorId] = decodeCursor(options.cursor);
  const n = query.bind.length;
  const rows = await db.query<R>(
    `SELECT ${query.select ?? 'r.*'} FROM ${query.from} AS r
     WHERE (${query.where}) AND ($${n + 1}::timestamptz IS NULL OR (r.created_at, r.id::text) < ($${n + 1}::timestamptz, $${n + 2}::text))
     ORDER BY r.created_at DESC, r.id DESC LIMIT $${n + 3}`,
    { bind: [...query.bind, cursorAt, cursorId, options.limit + 1], type: QueryTypes.SELECT },
  );
  const page = keysetPage(rows, options.limit, (row) => row);
  return { ...page, items: await Promise.all(page.items.map(present)) };
}
