import type { Sequelize } from 'sequelize';
import type { HostConfig } from '../config/schema.js';
import { MinuteBudget, type RateLimitRefusal } from '../db/minute-budget.js';

export type { RateLimitRefusal } from '../db/minute-budget.js';

/**
 * Token buckets on chat traffic (`[rate_limits]`): per caller, per session, all anonymous callers together, and
 * WebSocket handshakes per address. The buckets are rows in Postgres, so every instance draws from the same ones.
 */
export class TrafficLimits {
  private readonly perCaller: MinuteBudget;
  private readonly perSession: MinuteBudget;
  private readonly anonymous: MinuteBudget;
  private readonly handshakes: MinuteBudget;

  constructor(db: Sequelize, limits: HostConfig['rate_limits']) {
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

  /** Takes one chat turn from the caller's, the session's and, for anonymous callers, the shared bucket. */
  async takeTurn(input: { callerKey: string | null; sessionId: string | null; anonymous: boolean }): Promise<RateLimitRefusal | undefined> {
    return (
      (input.callerKey ? await this.perCaller.take(input.callerKey) : undefined) ??
      (input.sessionId ? await this.perSession.take(input.sessionId) : undefined) ??
      (input.anonymous ? await this.anonymous.take('all') : undefined)
    );
  }

  /** Takes one WebSocket handshake, or one start of a public session, from the address's bucket. */
  takeHandshake(address: string | null): Promise<RateLimitRefusal | undefined> {
    return address ? this.handshakes.take(address) : Promise.resolve(undefined);
  }
}
