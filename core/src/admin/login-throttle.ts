import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { Sequelize } from 'sequelize';

/** How long a refused attempt waits, for the 429's message. */
export interface ThrottleRefusal {
  retryAfterSeconds: number;
}

/** Longest delay added before checking the password of a username failing from many addresses. */
const MAX_DELAY_MS = 10_000;

const bucket = (db: Sequelize, keyPrefix: string, points: number, duration: number, blockDuration = 0) =>
  new RateLimiterPostgres({
    storeClient: db,
    storeType: 'sequelize',
    tableName: 'rate_limit_buckets',
    tableCreated: true,
    keyPrefix,
    points,
    duration,
    blockDuration,
  });

/**
 * Password guesses (logins and challenge verifies), counted in Postgres so every instance shares the count:
 * - an attempt is reserved (an atomic increment) before the password is checked, so parallel guesses cannot all be
 *   checked before the first failure counts;
 * - `maxFailures` attempts per username and client address lock that pair for `lockoutSeconds`, so failures from
 *   elsewhere never lock the real user out; a success gives the pair its attempts back;
 * - a client address gets 20 times as many across usernames;
 * - failures on one username from any address slow its next checks down (doubling, up to 10 s) instead of locking.
 */
export class LoginThrottle {
  private readonly perUserAndAddress: RateLimiterPostgres;
  private readonly perAddress: RateLimiterPostgres;
  private readonly perUser: RateLimiterPostgres;

  constructor(
    db: Sequelize,
    private readonly maxFailures: number,
    lockoutSeconds: number,
  ) {
    this.perUserAndAddress = bucket(db, 'login-user-address', maxFailures, lockoutSeconds, lockoutSeconds);
    this.perAddress = bucket(db, 'login-address', maxFailures * 20, lockoutSeconds, lockoutSeconds);
    this.perUser = bucket(db, 'login-user', 1_000_000, lockoutSeconds);
  }

  /** Reserves one attempt for `username` from `address`; a refusal when either is out of attempts. */
  async reserve(username: string, address: string | null): Promise<ThrottleRefusal | undefined> {
    try {
      await this.perUserAndAddress.consume(pairKey(username, address));
      if (address) await this.perAddress.consume(address);
      return undefined;
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      return { retryAfterSeconds: Math.max(1, Math.ceil(error.msBeforeNext / 1000)) };
    }
  }

  /** How long to wait before checking a password of `username`, from its recent failures across every address. */
  async delayMs(username: string): Promise<number> {
    const failures = (await this.perUser.get(userKey(username)))?.consumedPoints ?? 0;
    return failures < this.maxFailures ? 0 : Math.min(MAX_DELAY_MS, 250 * 2 ** (failures - this.maxFailures));
  }

  async failed(username: string): Promise<void> {
    await this.perUser.consume(userKey(username));
  }

  /** The password was right: the pair's attempts and the address's reserved one are given back. */
  async succeeded(username: string, address: string | null): Promise<void> {
    await this.perUserAndAddress.delete(pairKey(username, address));
    if (address) await this.perAddress.reward(address, 1);
  }
}

const userKey = (username: string) => username.trim().toLowerCase();
const pairKey = (username: string, address: string | null) => `${userKey(username)}|${address ?? 'unknown'}`;
