import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';
import type { HostConfig } from '../config/schema.js';

/** A request past a bucket: what the caller is told, and when to come back (`Retry-After`). */
export interface RateLimitRefusal {
  detail: string;
  retryAfterSeconds: number;
}

interface Bucket {
  limiter: RateLimiterPostgres;
  what: string;
}

/**
 * Token buckets on chat traffic (`[rate_limits]`): per caller, per session, all anonymous callers together, and
 * WebSocket handshakes per address. The buckets are rows in Postgres, so every instance draws from the same ones.
 */
export class TrafficLimits {
  private readonly perCaller?: Bucket;
  private readonly perSession?: Bucket;
  private readonly anonymous?: Bucket;
  private readonly handshakes?: Bucket;

  constructor(db: Sequelize, limits: HostConfig['rate_limits']) {
    const bucket = (keyPrefix: string, points: number, what: string): Bucket | undefined =>
      points > 0
        ? {
            limiter: new RateLimiterPostgres({
              storeClient: db,
              storeType: 'sequelize',
              tableName: 'rate_limit_buckets',
              tableCreated: true,
              clearExpiredByTimeout: true,
              keyPrefix,
              points,
              duration: 60,
            }),
            what,
          }
        : undefined;
    this.perCaller = bucket('turns-caller', limits.stream_per_ip_per_minute, `${limits.stream_per_ip_per_minute} messages a minute from one client`);
    this.perSession = bucket('turns-session', limits.stream_per_session_per_minute, `${limits.stream_per_session_per_minute} messages a minute in one session`);
    this.anonymous = bucket('turns-anonymous', limits.anonymous_per_minute, 'the messages this host takes from anonymous clients each minute');
    this.handshakes = bucket(
      'ws-handshakes',
      limits.socket_handshakes_per_ip_per_minute,
      `${limits.socket_handshakes_per_ip_per_minute} connections or new sessions a minute from one client`,
    );
  }

  /** Takes one chat turn from the caller's, the session's and, for anonymous callers, the shared bucket. */
  async takeTurn(input: { callerKey: string | null; sessionId: string | null; anonymous: boolean }): Promise<RateLimitRefusal | undefined> {
    return (
      (input.callerKey ? await take(this.perCaller, input.callerKey) : undefined) ??
      (input.sessionId ? await take(this.perSession, input.sessionId) : undefined) ??
      (input.anonymous ? await take(this.anonymous, 'all') : undefined)
    );
  }

  /** Takes one WebSocket handshake, or one start of a public session, from the address's bucket. */
  takeHandshake(address: string | null): Promise<RateLimitRefusal | undefined> {
    return address ? take(this.handshakes, address) : Promise.resolve(undefined);
  }
}

async function take(bucket: Bucket | undefined, key: string): Promise<RateLimitRefusal | undefined> {
  if (!bucket) return undefined;
  try {
    await bucket.limiter.consume(key);
    return undefined;
  } catch (error) {
    // The library rejects with its result object when the bucket is empty, and with an Error when Postgres fails.
    if (!(error instanceof RateLimiterRes)) throw error;
    const retryAfterSeconds = Math.max(1, Math.ceil(error.msBeforeNext / 1000));
    return { detail: `too many requests: the limit is ${bucket.what}; retry in ${retryAfterSeconds} s`, retryAfterSeconds };
  }
}
