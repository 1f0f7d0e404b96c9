import { QueryTypes, type Sequelize } from 'sequelize';
import { decodeCursor, encodeCursor } from '../db/keyset-cursor.js';

/**
 * One page of `table`, newest first, keyset-paged on (created_at, id), as
 * `{items, next_cursor, limit}`. `where` is an extra condition on `$1`
 * (`filter`); the table and condition come from code, never from a request.
 */
export async function newestFirst<Row extends { id: string; created_at: Date }, Item>(
  db: Sequelize,
  table: string,
  page: { limit: number; cursor?: string },
  present: (row: Row) => Item,
  where?: { sql: string; value: string },
) {
  const [at, id] = decodeCursor(page.cursor);
  const rows = await db.query<Row>(
    `SELECT * FROM ${table} WHERE ${where ? where.sql : '$1::text IS NULL'} AND ($2::timestamptz IS NULL OR (created_at, id::text) < ($2::timestamptz, $3::text))
     ORDER BY created_at DESC, id DESC LIMIT $4`,
    { bind: [where?.value ?? null, at, id, page.limit + 1], type: QueryTypes.SELECT },
  );
  const items = rows.slice(0, page.limit);
  return { items: items.map(present), next_cursor: rows.length > page.limit ? encodeCursor(items.at(-1)!.created_at, items.at(-1)!.id) : null, limit: page.limit };
}
