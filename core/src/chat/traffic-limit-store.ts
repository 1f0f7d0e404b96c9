import { preparedQuery } from '../db/prepared-query.js';
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

/**
 * The upsert of one bucket, as rate-limiter-flexible's Postgres limiter (behind `MinuteBudget`) writes it, so both
 * count in the same rows: a bucket whose minute ended starts again at 1. `$1` is now, `$2` the end of a new minute.
 */
const upsert = (key: string, guard: string) => `INSERT INTO rate_limit_buckets (key, points, expire) SELECT ${key}, 1, $2::bigint${guard}
  ON CONFLICT (key) DO UPDATE SET
    points = CASE WHEN rate_limit_buckets.expire <= $1 THEN 1 ELSE rate_limit_buckets.points + 1 END,
    expire = CASE WHEN rate_limit_buckets.expire <= $1 THEN EXCLUDED.expire ELSE rate_limit_buckets.expire END
  RETURNING points, expire`;

/**
 * The statement taking `n` buckets: bucket i's key is `$(3+i)` and its budget `$(3+n+i)` (the last one's is not
 * needed); each bucket is charged only while those before it are within their budgets.
 */
function takeStatement(n: number): string {
  const ctes = Array.from({ length: n }, (_, i) => {
    const within = Array.from({ length: i }, (_, j) => `(SELECT points FROM b${j}) <= $${3 + n + j}::int`);
    return `b${i} AS (${upsert(`$${3 + i}::varchar`, within.length ? ` WHERE ${within.join(' AND ')}` : '')})`;
  });
  const columns = Array.from({ length: n }, (_, i) => `(SELECT points FROM b${i}) AS p${i}, (SELECT expire FROM b${i})::text AS e${i}`);
  return `WITH ${ctes.join(', ')} SELECT ${columns.join(', ')}`;
}

const statements = new Map<number, string>();

/** The SQL of the per-minute request buckets a chat turn draws from (`rate_limit_buckets`). */
export class TrafficLimitStore extends SqlStore {
  /**
   * Takes one request from each of `buckets` in one statement, in order, charging a bucket only while every bucket
   * before it is within its budget, as separate takes that stop at the first refusal would. Resolves with each
   * bucket after the take, `null` for one not charged.
   */
  async take(buckets: BucketTake[]): Promise<(TakenBucket | null)[]> {
    if (buckets.length === 0) return [];
    let text = statements.get(buckets.length);
    if (!text) statements.set(buckets.length, (text = takeStatement(buckets.length)));
    const now = Date.now();
    const [row] = await preparedQuery<Record<string, number | string | null>>(this.db, `take-buckets-${buckets.length}`, text, [
      now,
      now + WINDOW_MS,
      ...buckets.map((b) => b.key),
      ...buckets.slice(0, -1).map((b) => b.points),
    ]);
    return buckets.map((_, i) => (row![`p${i}`] == null ? null : { points: Number(row![`p${i}`]), expire: Number(row![`e${i}`]) }));
  }
}
