import { preparedQuery } from '../db/prepared-query.js';
import { SKIP_FLUSH_WAIT } from '../db/skip-flush-wait.js';
import { SqlStore } from '../db/sql-store.js';

/** One budget of a combined take: its row in `rate_limit_buckets` (`<prefix>:<key>`) and its requests a minute. */
export interface BucketTake {
  key: string;
  points: number;
}

/** A bucket after a take: its points in the current minute and when that minute ends (ms since the epoch). */
export interface TakenBucket {
  points: number;
  expire: number;
}

const WINDOW_MS = 60_000;

/** Now and the end of a minute starting now (ms since the epoch): a bucket whose minute ended restarts with these. */
export function bucketMinute(): [now: number, end: number] {
  const now = Date.now();
  return [now, now + WINDOW_MS];
}

/** Names a value as the statement's next parameter (`$n`). */
export type Param = (value: unknown) => string;

/**
 * The upsert of one bucket, as rate-limiter-flexible's Postgres limiter (behind `MinuteBudget`) writes it, so both
 * count in the same rows: a bucket whose minute ended starts again at 1.
 */
const upsert = (
  key: string,
  [now, end]: [string, string],
  guard: string,
) => `INSERT INTO rate_limit_buckets (key, points, expire) SELECT ${key}, 1, ${end}::bigint${guard}
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN rate_limit_buckets.expire <= ${now} THEN 1 ELSE rate_limit_buckets.points + 1 END,
    expire = CASE WHEN rate_limit_buckets.expire <= ${now} THEN EXCLUDED.expire ELSE rate_limit_buckets.expire END
  RETURNING points, expire`;

/**
 * The SQL that takes one request from each of `buckets`, for a statement of its own or one that does more (a new
 * session's): the CTEs `b0`, `b1`, … (each bucket charged only while those before it are within their budgets), the
 * result columns `p<i>` and `e<i>` (read back by {@link takenBuckets}), and `allowed()`, the condition that every bucket
 * allowed the request.
 */
export function bucketTakes(buckets: BucketTake[], p: Param): { ctes: string[]; columns: string[]; allowed: () => string } {
  let minute: [string, string] | undefined;
  const budgets: string[] = [];
  const budget = (j: number) => (budgets[j] ??= `${p(buckets[j]!.points)}::int`);
  const within = (count: number) => Array.from({ length: count }, (_, j) => `(SELECT points FROM b${j}) <= ${budget(j)}`).join(' AND ') || 'TRUE';
  const ctes = buckets.map((bucket, i) => {
    minute ??= bucketMinute().map(p) as [string, string];
    return `b${i} AS (${upsert(`${p(bucket.key)}::varchar`, minute, i > 0 ? ` WHERE ${within(i)}` : '')})`;
  });
  const columns = buckets.map((_, i) => `(SELECT points FROM b${i}) AS p${i}, (SELECT expire FROM b${i})::text AS e${i}`);
  return { ctes, columns, allowed: () => within(buckets.length) };
}

/** Each bucket of a {@link bucketTakes} after the take, from the statement's row; `null` for one not charged. */
export const takenBuckets = (count: number, row: Record<string, unknown>): (TakenBucket | null)[] =>
  Array.from({ length: count }, (_, i) => (row[`p${i}`] == null ? null : { points: Number(row[`p${i}`]), expire: Number(row[`e${i}`]) }));

/** The SQL of the per-minute request buckets a chat turn draws from (`rate_limit_buckets`). */
export class TrafficLimitStore extends SqlStore {
  /**
   * Takes one request from each of `buckets` in one statement, in order, charging a bucket only while every bucket
   * before it is within its budget, as separate takes that stop at the first refusal would. Resolves with each
   * bucket after the take, `null` for one not charged. A turn's take that comes with its place in a session's line is
   * `ConversationStore.admitToSession`'s.
   */
  async take(buckets: BucketTake[]): Promise<(TakenBucket | null)[]> {
    if (buckets.length === 0) return [];
    const values: unknown[] = [];
    const p: Param = (value) => `$${values.push(value)}`;
    const { ctes, columns } = bucketTakes(buckets, p);
    columns.push(SKIP_FLUSH_WAIT);
    const [row] = await preparedQuery<Record<string, unknown>>(
      this.db,
      `take-buckets-${buckets.length}`,
      `WITH ${ctes.join(', ')} SELECT ${columns.join(', ')}`,
      values,
    );
    return takenBuckets(buckets.length, row!);
  }
}
