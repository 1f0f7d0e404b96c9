import type { Sequelize } from 'sequelize';
import type { HostConfig } from '../config/schema.js';
import { MinuteBudget, type RateLimitRefusal } from '../db/minute-budget.js';
import { TrafficLimitStore, type BucketTake, type TakenBucket } from './traffic-limit-store.js';

export type { RateLimitRefusal } from '../db/minute-budget.js';

/** The keys of a chat turn's minute budgets: the caller's, the session's, and whether the shared anonymous one applies. */
export interface TurnBudgets {
  callerKey: string | null;
  sessionId: string | null;
  anonymous: boolean;
}

/** Buckets for a statement that takes them with more, and the refusal, if any, of those buckets after the take. */
export interface BudgetBuckets {
  buckets: BucketTake[];
  refusal: (taken: (TakenBucket | null)[]) => { refusal: RateLimitRefusal } | undefined;
}

/**
 * Token buckets on chat traffic (`[rate_limits]`): per caller, per session, all anonymous callers together, and
 * WebSocket handshakes per address. The buckets are rows in Postgres, so every instance draws from the same ones.
 */
export class TrafficLimits {
  private readonly perCaller: MinuteBudget;
  private readonly perSession: MinuteBudget;
  private readonly anonymous: MinuteBudget;
  private readonly handshakes: MinuteBudget;
  private readonly store: TrafficLimitStore;

  constructor(db: Sequelize, limits: HostConfig['rate_limits']) {
    this.store = new TrafficLimitStore(db);
    const bucket = (keyPrefix: string, points: number, what: string) => new MinuteBudget(db, keyPrefix, points, what);
    this.perCaller = bucket('turns-caller', limits.stream_per_ip_per_minute, `${limits.stream_per_ip_per_minute} messages a minute from one client`);
    this.perSession = bucket('turns-session', limits.stream_per_session_per_minute, `${limits.stream_per_session_per_minute} messages a minute in one session`);
    this.anonymous = bucket('turns-anonymous', limits.anonymous_per_minute, 'the messages this host takes from anonymous clients each minute');
    this.handshakes = bucket(
      'ws-handshakes',
      limits.socket_handshakes_per_ip_per_minute,
      `${limits.socket_handshakes_per_ip_per_minute} connections or new sessions a minute from one client`,
    );
  }

  /**
   * Takes one chat turn from the caller's, the session's and, for anonymous callers, the shared bucket, in one
   * statement: a bucket is charged only while the ones before it allow the turn, so a refused client does not spend
   * the shared budget. Resolves with the refusal, if any.
   */
  async takeTurn(input: TurnBudgets): Promise<RateLimitRefusal | undefined> {
    return this.take(this.turnBuckets(input));
  }

  /**
   * The buckets one chat turn draws from, for a statement that takes them with more (a new session's), and the
   * refusal, if any, of those buckets after the take.
   */
  turnBuckets(input: TurnBudgets): BudgetBuckets {
    return this.bucketsOf([
      [this.perCaller, input.callerKey],
      [this.perSession, input.sessionId],
      [this.anonymous, input.anonymous ? 'all' : null],
    ]);
  }

  /** The bucket of a WebSocket handshake, for a statement that takes it with more (the session it joins), and its refusal. */
  handshakeBuckets(address: string | null): BudgetBuckets {
    return this.bucketsOf([[this.handshakes, address]]);
  }

  /** Takes one WebSocket handshake, or one start of a public session, from the address's bucket. */
  async takeHandshake(address: string | null): Promise<RateLimitRefusal | undefined> {
    return this.take(this.handshakeBuckets(address));
  }

  /** Takes one request from each of `buckets` in one statement (`TrafficLimitStore.take`); the first refusal, if any. */
  private async take({ buckets, refusal }: BudgetBuckets): Promise<RateLimitRefusal | undefined> {
    return refusal(await this.store.take(buckets))?.refusal;
  }

  /** The bucket of each budget's key (none for a `null` key), and the first refusal among them after a take. */
  private bucketsOf(budgets: [MinuteBudget, string | null][]): BudgetBuckets {
    const takes: { budget: MinuteBudget; bucket: BucketTake }[] = [];
    for (const [budget, key] of budgets) {
      const bucket = key === null ? undefined : budget.bucket(key);
      if (bucket) takes.push({ budget, bucket });
    }
    const refusal = (taken: (TakenBucket | null)[]) => {
      for (const [i, { budget }] of takes.entries()) {
        const after = taken[i];
        const refused = after && budget.refusalAt(after.points, after.expire);
        if (refused) return { refusal: refused };
      }
      return undefined;
    };
    return { buckets: takes.map((t) => t.bucket), refusal };
  }
}
