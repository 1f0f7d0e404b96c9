import type { Sequelize } from 'sequelize';
import { GroupedCalls } from '../services/grouped-calls.js';
import { bindableJson, preparedQuery } from '../db/prepared-query.js';
import { bucketMinute, type BucketTake, type TakenBucket } from './traffic-limit-store.js';

/**
 * How turn saves, and the requests that take minute budgets (turns admitted, customer sockets joining), share
 * statements: one runs at a time, and the items that come meanwhile go together in the next, up to 64. Items that come
 * one at a time each have a statement of their own, at once. Two at a time, the stream bench's turns shared fewer
 * statements, and Postgres spent about a fifth more CPU a turn at 16 and 64 turns at once (`bench/stream/RESULTS.md`).
 */
export const GROUPED_STATEMENTS = { concurrency: 1, maxBatch: 64 };

/** A column of a grouped statement's rows (`u`): its name, its SQL type, and its value for an item. */
export type GroupedField<T> = [name: string, type: string, value: (item: T) => unknown];

/** A request that takes its minute budgets in a grouped statement. */
export interface BudgetedItem {
  budgets: BucketTake[];
}

/**
 * Grouped writes (`GroupedCalls`, `GROUPED_STATEMENTS`) of items that take minute budgets, one group for each list of
 * budgets: only items drawing from the same budgets, in the same order, share a statement (`take_turn_buckets`,
 * migration `0042`), and a bucket's key is `<budget>:<key>`. Items of one `key`, if given, never share a statement.
 */
export class BudgetGroupedCalls<T extends BudgetedItem, R> {
  private readonly groups = new Map<string, GroupedCalls<T, R>>();

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly key?: (item: T) => string,
  ) {}

  submit(item: T): Promise<R> {
    const budgetsOf = item.budgets.map((bucket) => bucket.key.slice(0, bucket.key.indexOf(':'))).join(' ');
    let group = this.groups.get(budgetsOf);
    if (!group) this.groups.set(budgetsOf, (group = new GroupedCalls(this.write, { ...GROUPED_STATEMENTS, key: this.key })));
    return group.submit(item);
  }
}

/**
 * The CTEs of a grouped take: `u`, a row of `fields` per item (`$1`) with `i`, its place from 1, and `t`, the budgets
 * of them all taken by `take_turn_buckets` (migration `0042`): `$2` items of `$7` buckets each (keys `$3`, budgets
 * `$4`, the minute `$5` to `$6`), as {@link groupedTakeParams} gives them.
 */
export const groupedTake = <T>(fields: GroupedField<T>[]) => `u AS (
    SELECT * FROM jsonb_to_recordset($1::jsonb) AS u (i int, ${fields.map(([name, type]) => `${name} ${type}`).join(', ')})),
  t AS (SELECT * FROM take_turn_buckets($2::int, $3::varchar[], $4::int[], $5::bigint, $6::bigint))`;

/** The parameters of a {@link groupedTake} of `items`, which draw from the same budgets. */
function groupedTakeParams<T extends BudgetedItem>(items: T[], fields: GroupedField<T>[]): unknown[] {
  const [now, end] = bucketMinute();
  return [
    bindableJson(items.map((item, i) => Object.fromEntries([['i', i + 1], ...fields.map(([name, , value]) => [name, value(item)])]))),
    items.length,
    items.flatMap((item) => item.budgets.map((bucket) => bucket.key)),
    items.flatMap((item) => item.budgets.map((bucket) => bucket.points)),
    now,
    end,
    items[0]!.budgets.length,
  ];
}

/** The result columns of a row's buckets after a {@link groupedTake}, read by {@link groupTakenBuckets}. */
export const GROUP_TAKEN_BUCKETS = `t.taken_points[(u.i - 1) * $7::int + 1 : u.i * $7::int] AS points, t.taken_expires[(u.i - 1) * $7::int + 1 : u.i * $7::int]::text[] AS expires`;

type GroupTakenBuckets = { points: (number | null)[]; expires: (string | null)[] };

/** A row's buckets after the take ({@link GROUP_TAKEN_BUCKETS}), `null` for one not charged. */
const groupTakenBuckets = (row: GroupTakenBuckets): (TakenBucket | null)[] =>
  row.points.map((points, i) => (points === null ? null : { points, expire: Number(row.expires[i]) }));

/**
 * The rows of `sql`, a prepared statement (`name`) that starts with a {@link groupedTake} of `items` (drawing from the
 * same budgets) and selects {@link GROUP_TAKEN_BUCKETS}: a row per item, in their order, with its buckets after the
 * take.
 */
export async function groupedTakeRows<T extends BudgetedItem, Row>(
  db: Sequelize,
  name: string,
  sql: string,
  items: T[],
  fields: GroupedField<T>[],
): Promise<(Row & { buckets: (TakenBucket | null)[] })[]> {
  const rows = await preparedQuery<Row & GroupTakenBuckets>(db, name, sql, groupedTakeParams(items, fields));
  return rows.map((row) => ({ ...row, buckets: groupTakenBuckets(row) }));
}
