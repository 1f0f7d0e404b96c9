import type { Sequelize } from 'sequelize';
import { RequestLimitStore } from './request-limit-store.js';

/** The usage limits of an agent (spec 2.4, part 8); `null` means unlimited. */
export interface AgentLimits {
  max_concurrent_requests: number | null;
  max_total_requests: number | null;
  max_requests_per_day: number | null;
  max_total_tokens_daily: number | null;
  max_total_tokens_monthly: number | null;
  max_cost_usd_daily: number | null;
  max_cost_usd_monthly: number | null;
}

/** How long a concurrency lease lives unless renewed; a crashed instance's slots free up within it. */
export const LEASE_SECONDS = 30;

/** A held concurrency slot, renewed until released. */
export interface Lease {
  release(): Promise<void>;
}

/**
 * Agent request limits, read from persisted turns that count (fixed
 * responses do not) in UTC day and month windows, and concurrency held by
 * leases in Postgres so every host instance sees the same count.
 */
export class RequestLimits {
  private readonly store: RequestLimitStore;

  constructor(
    db: Sequelize,
    private readonly instanceId: string,
    private readonly perCallerDaily: number,
    private readonly leaseSeconds = LEASE_SECONDS,
  ) {
    this.store = new RequestLimitStore(db);
  }

  /**
   * The per-user quota: counted turns of one caller in the current UTC day, across agents; `countedToday` when the
   * caller's turns were already counted (the statement opening the session does), else they are counted here.
   */
  async callerExceeded(callerKey: string | null, countedToday?: number | null): Promise<string | undefined> {
    if (!callerKey || this.perCallerDaily <= 0) return undefined;
    return (countedToday ?? (await this.store.callerTurnsToday(callerKey))) >= this.perCallerDaily
      ? `you reached your daily request quota (${this.perCallerDaily}); try again tomorrow (UTC)`
      : undefined;
  }

  /** A refusal message when a cumulative limit is reached, else `undefined`. */
  async exceeded(agentId: string, limits: AgentLimits): Promise<string | undefined> {
    const cumulative = [
      limits.max_total_requests,
      limits.max_requests_per_day,
      limits.max_total_tokens_daily,
      limits.max_total_tokens_monthly,
      limits.max_cost_usd_daily,
      limits.max_cost_usd_monthly,
    ];
    if (cumulative.every((l) => l === null)) return undefined;
    const u = await this.store.agentUsage(agentId, {
      month: limits.max_total_tokens_monthly !== null || limits.max_cost_usd_monthly !== null,
      totalUpTo: limits.max_total_requests,
    });
    const checks: [number | null, number, string][] = [
      [limits.max_total_requests, Number(u.total), 'max_total_requests'],
      [limits.max_requests_per_day, Number(u.today), 'max_requests_per_day'],
      [limits.max_total_tokens_daily, Number(u.tokens_today), 'max_total_tokens_daily'],
      [limits.max_total_tokens_monthly, Number(u.tokens_month), 'max_total_tokens_monthly'],
      [limits.max_cost_usd_daily, Number(u.cost_today), 'max_cost_usd_daily'],
      [limits.max_cost_usd_monthly, Number(u.cost_month), 'max_cost_usd_monthly'],
    ];
    const hit = checks.find(([limit, used]) => limit !== null && used >= limit);
    return hit ? `this agent reached its ${hit[2]} limit (${hit[0]}); try again later` : undefined;
  }

  /** Drops the concurrency leases a crashed instance left, once expired; how many. */
  sweepLapsed(): Promise<number> {
    return this.store.sweepLapsedLeases();
  }

  /**
   * Takes one of `max` concurrent slots of the agent, serialised per agent by
   * a transaction-scoped advisory lock. A lease expires unless renewed, so a
   * crashed instance cannot hold slots forever; the holder renews it every
   * third of its lifetime however long the turn runs. Resolves with the
   * lease, or `undefined` when all slots are taken.
   */
  async acquire(agentId: string, max: number): Promise<Lease | undefined> {
    const id = await this.store.takeLease(agentId, max, this.instanceId, this.leaseSeconds);
    if (!id) return undefined;
    const renewal = setInterval(
      () => {
        // A failed renewal is retried on the next tick; at worst the slot frees up early.
        this.store.renewLease(id, this.leaseSeconds).catch(() => undefined);
      },
      (this.leaseSeconds * 1000) / 3,
    );
    renewal.unref();
    return {
      release: async () => {
        clearInterval(renewal);
        await this.store.releaseLease(id);
      },
    };
  }
}
