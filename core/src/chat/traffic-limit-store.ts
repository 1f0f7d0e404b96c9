import { preparedQuery } from '../db/prepared-query.js';
import { SqlStore } from '../db/sql-store.js';
import { joinLine } from './turn-queue-store.js';

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

/** A place in a session's line to take when every bucket allows the turn (`joinLine`). */
export interface LineTake {
  sessionId: string;
  turnId: string;
  instanceId: string;
  seconds: number;
}

/**
 * The statement taking `n` buckets: bucket i's key is `$(3+i)` and its budget `$(3+n+i)`; each bucket is charged only
 * while those before it are within their budgets. With `line`, it also joins the session's line when every bucket is
 * within its budget: the last one's budget, then the line's four values, follow the others (alone without buckets).
 */
function takeStatement(n: number, line: boolean): string {
  const within = (count: number) => Array.from({ length: count }, (_, j) => `(SELECT points FROM b${j}) <= $${3 + n + j}::int`);
  const ctes = Array.from({ length: n }, (_, i) => `b${i} AS (${upsert(`$${3 + i}::varchar`, i > 0 ? ` WHERE ${within(i).join(' AND ')}` : '')})`);
  const columns = Array.from({ length: n }, (_, i) => `(SELECT points FROM b${i}) AS p${i}, (SELECT expire FROM b${i})::text AS e${i}`);
  if (line) {
    const v = (k: number) => `$${n > 0 ? 3 + 2 * n + k : 1 + k}`;
    const allowed = n > 0 ? `WHERE ${within(n).join(' AND ')}` : '';
    ctes.push(`q AS (${joinLine({ session: `${v(0)}::text`, turn: v(1), instance: v(2), seconds: v(3) }, allowed)})`);
    columns.push('(SELECT id FROM q) AS ticket');
  }
  return `WITH ${ctes.join(', ')} SELECT ${columns.join(', ')}`;
}

const statements = new Map<string, string>();

/** The SQL of the per-minute request buckets a chat turn draws from (`rate_limit_buckets`). */
export class TrafficLimitStore extends SqlStore {
  /**
   * Takes one request from each of `buckets` in one statement, in order, charging a bucket only while every bucket
   * before it is within its budget, as separate takes that stop at the first refusal would. Resolves with each
   * bucket after the take, `null` for one not charged; with `line`, also with the ticket of the turn's place in its
   * session's line, taken in the same statement when every bucket allowed the turn (else `null`).
   */
  async take(buckets: BucketTake[], line: LineTake | null = null): Promise<{ buckets: (TakenBucket | null)[]; ticketId: string | null }> {
    if (buckets.length === 0 && !line) return { buckets: [], ticketId: null };
    const name = `take-buckets-${buckets.length}${line ? '-line' : ''}`;
    let text = statements.get(name);
    if (!text) statements.set(name, (text = takeStatement(buckets.length, line !== null)));
    const now = Date.now();
    const budgets = buckets.map((b) => b.points);
    const [row] = await preparedQuery<Record<string, number | string | null>>(this.db, name, text, [
      ...(buckets.length > 0 ? [now, now + WINDOW_MS] : []),
      ...buckets.map((b) => b.key),
      // The last bucket's budget is needed only to allow the line.
      ...(line ? budgets : budgets.slice(0, -1)),
      ...(line ? [line.sessionId, line.turnId, line.instanceId, line.seconds] : []),
    ]);
    return {
      buckets: buckets.map((_, i) => (row![`p${i}`] == null ? null : { points: Number(row![`p${i}`]), expire: Number(row![`e${i}`]) })),
      ticketId: (row!.ticket as string | null | undefined) ?? null,
    };
  }
}
