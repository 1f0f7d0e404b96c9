import { QueryTypes, type Sequelize } from 'sequelize';
import { decodeCursor, encodeCursor } from '../db/keyset-cursor.js';

/**
 * One page `{items, next_cursor, limit}` of `SELECT <select> FROM <from> AS r
 * WHERE <where>`, newest first, keyset on `(r.created_at, r.id)`; `where` may
 * use `$1..$n` of `bind`.
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
  const page = rows.slice(0, options.limit);
  return {
    items: await Promise.all(page.map(present)),
    next_cursor: rows.length > options.limit ? encodeCursor(page.at(-1)!.created_at, page.at(-1)!.id) : null,
    limit: options.limit,
  };
}
