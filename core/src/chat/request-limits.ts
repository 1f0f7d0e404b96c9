import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';

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

interface Usage {
  total: string;
  today: string;
  tokens_today: string;
  tokens_month: string;
  cost_today: string;
  cost_month: string;
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
  constructor(
    private readonly db: Sequelize,
    private readonly instanceId: string,
    private readonly perCallerDaily: number,
    private readonly leaseSeconds = LEASE_SECONDS,
  ) {}

  /** The per-user quota: counted turns of one caller in the current UTC day, across agents. */
  async callerExceeded(callerKey: string | null): Promise<string | undefined> {
    if (!callerKey || this.perCallerDaily <= 0) return undefined;
    const [row] = await this.db.query<{ today: string }>(
      `SELECT count(*) AS today FROM conversation_turns
       WHERE caller_key = $1 AND counts_toward_limits AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`,
      { bind: [callerKey], type: QueryTypes.SELECT },
    );
    return Number(row!.today) >= this.perCallerDaily ? `you reached your daily request quota (${this.perCallerDaily}); try again tomorrow (UTC)` : undefined;
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
    const [u] = await this.db.query<Usage>(
      `WITH w AS (SELECT date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS day,
                         date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month)
       SELECT count(*) AS total,
              count(*) FILTER (WHERE t.created_at >= w.day) AS today,
              COALESCE(sum(t.total_tokens) FILTER (WHERE t.created_at >= w.day), 0) AS tokens_today,
              COALESCE(sum(t.total_tokens) FILTER (WHERE t.created_at >= w.month), 0) AS tokens_month,
              COALESCE(sum(t.estimated_cost_usd) FILTER (WHERE t.created_at >= w.day), 0) AS cost_today,
              COALESCE(sum(t.estimated_cost_usd) FILTER (WHERE t.created_at >= w.month), 0) AS cost_month
       FROM conversation_turns t, w WHERE t.agent_id = $1 AND t.counts_toward_limits`,
      { bind: [agentId], type: QueryTypes.SELECT },
    );
    const checks: [number | null, number, string][] = [
      [limits.max_total_requests, Number(u!.total), 'max_total_requests'],
      [limits.max_requests_per_day, Number(u!.today), 'max_requests_per_day'],
      [limits.max_total_tokens_daily, Number(u!.tokens_today), 'max_total_tokens_daily'],
      [limits.max_total_tokens_monthly, Number(u!.tokens_month), 'max_total_tokens_monthly'],
      [limits.max_cost_usd_daily, Number(u!.cost_today), 'max_cost_usd_daily'],
      [limits.max_cost_usd_monthly, Number(u!.cost_month), 'max_cost_usd_monthly'],
    ];
    const hit = checks.find(([limit, used]) => limit !== null && used >= limit);
    return hit ? `this agent reached its ${hit[2]} limit (${hit[0]}); try again later` : undefined;
  }

  /**
   * Takes one of `max` concurrent slots of the agent, serialised per agent by
   * a transaction-scoped advisory lock. A lease expires unless renewed, so a
   * crashed instance cannot hold slots forever; the holder renews it every
   * third of its lifetime however long the turn runs. Resolves with the
   * lease, or `undefined` when all slots are taken.
   */
  async acquire(agentId: string, max: number): Promise<Lease | undefined> {
    const id = await this.db.transaction(async (transaction) => {
      await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', { bind: [agentId], transaction });
      const [row] = await this.db.query<{ active: string }>('SELECT count(*) AS active FROM agent_request_leases WHERE agent_id = $1 AND expires_at > now()', {
        bind: [agentId],
        type: QueryTypes.SELECT,
        transaction,
      });
      if (Number(row!.active) >= max) return undefined;
      const leaseId = randomUUID();
      await this.db.query(
        'INSERT INTO agent_request_leases (id, agent_id, instance_id, expires_at, created_at) VALUES ($1, $2, $3, now() + make_interval(secs => $4), now())',
        { bind: [leaseId, agentId, this.instanceId, this.leaseSeconds], transaction },
      );
      return leaseId;
    });
    if (!id) return undefined;
    const renewal = setInterval(
      () => {
        // A failed renewal is retried on the next tick; at worst the slot frees up early.
        this.db
          .query('UPDATE agent_request_leases SET expires_at = now() + make_interval(secs => $2) WHERE id = $1', { bind: [id, this.leaseSeconds] })
          .catch(() => undefined);
      },
      (this.leaseSeconds * 1000) / 3,
    );
    renewal.unref();
    return {
      release: async () => {
        clearInterval(renewal);
        await this.db.query('DELETE FROM agent_request_leases WHERE id = $1 OR expires_at < now()', { bind: [id] });
      },
    };
  }
}
