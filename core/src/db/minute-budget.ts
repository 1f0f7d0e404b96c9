import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';

/** A request past a budget: what the caller is told, and when to come back (`Retry-After`). */
export interface RateLimitRefusal {
  detail: string;
  retryAfterSeconds: number;
}

/**
 * A number of requests per key and minute, counted in Postgres (rows of `rate_limit_buckets`) so every instance
 * draws from the same budget. A budget of 0 takes everything.
 */
export class MinuteBudget {
  private readonly limiter: RateLimiterPostgres | undefined;

  /** `what` completes "the limit is ...", for example "20 messages a minute from one client". */
  constructor(
    db: Sequelize,
    keyPrefix: string,
    private readonly points: number,
    private readonly what: string,
  ) {
    this.limiter =
      points > 0
        ? new RateLimiterPostgres({
            storeClient: db,
            storeType: 'sequelize',
            tableName: 'rate_limit_buckets',
            tableCreated: true,
            clearExpiredByTimeout: true,
            keyPrefix,
            points,
            duration: 60,
          })
        : undefined;
  }

  /** Spends one request of `key`'s budget; the refusal when it is spent. */
  async take(key: string): Promise<RateLimitRefusal | undefined> {
    if (!this.limiter) return undefined;
    try {
      await this.limiter.consume(key);
      return undefined;
    } catch (error) {
      // The library rejects with its result object when the budget is spent, and with an Error when Postgres fails.
      if (!(error instanceof RateLimiterRes)) throw error;
      return this.refusal(error.msBeforeNext);
    }
  }

  /** `key`'s row and budget, for a take of several budgets in one statement; `undefined` when this budget takes everything. */
  bucket(key: string): { key: string; points: number } | undefined {
    return this.limiter ? { key: this.limiter.getKey(key), points: this.points } : undefined;
  }

  /** The refusal for a bucket of this budget at `points` in a minute ending at `expire`, if that is past the budget. */
  refusalAt(points: number, expire: number): RateLimitRefusal | undefined {
    return points > this.points ? this.refusal(expire - Date.now()) : undefined;
  }

  private refusal(msBeforeNext: number): RateLimitRefusal {
    const retryAfterSeconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
    return { detail: `too many requests: the limit is ${this.what}; retry in ${retryAfterSeconds} s`, retryAfterSeconds };
  }
}
