import { randomUUID } from 'node:crypto';
import { QueryTypes, type Sequelize } from 'sequelize';
import { deletedCount } from '../db/deleted-count.js';
import { preparedQuery } from '../db/prepared-query.js';

/** An agent's counted use in its windows (UTC day and month; see {@link RequestLimitStore.agentUsage}), as decimal text. */
export interface AgentUsage {
  total: string;
  today: string;
  tokens_today: string;
  tokens_month: string | null;
  cost_today: string;
  cost_month: string | null;
}

/** An agent's turns of one usage source, summed; numbers as Postgres returns them. */
export interface UsageGroup {
  token_usage_source: string;
  input_tokens: string;
  output_tokens: string;
  interactions: string;
  estimated: string;
  missing: string;
  input_cost: string;
  output_cost: string;
  total_cost: string;
}

/** The start of the current UTC day, as SQL. */
const UTC_DAY = "(date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC')";
/** UTC wall-clock times (`timestamp`): the month's first day, and the first day not closed yet (see `agentUsage`). */
const MONTH_START = "date_trunc('month', now() AT TIME ZONE 'UTC')";
const CLOSED_DAY = "date_trunc('day', (now() - interval '5 minutes') AT TIME ZONE 'UTC')";

/** The counted turns of caller `$param` since the start of the UTC day, across agents: for the statement opening a turn's session. */
export const callerTurnsToday = (param: string) => `SELECT count(*) FROM conversation_turns
  WHERE caller_key = ${param} AND counts_toward_limits AND created_at >= ${UTC_DAY}`;

/** The SQL of request limits: counted turns (`conversation_turns`, closed days totalled in `agent_usage_days`) and concurrency leases (`agent_request_leases`). */
export class RequestLimitStore {
  constructor(private readonly db: Sequelize) {}

  /** The caller's counted turns since the start of the UTC day, across agents. */
  async callerTurnsToday(callerKey: string): Promise<number> {
    const [row] = await preparedQuery<{ today: string }>(this.db, 'caller-turns-today', `SELECT (${callerTurnsToday('$1')}) AS today`, [callerKey]);
    return Number(row!.today);
  }

  /**
   * The agent's counted use in the windows its set limits span, reading no more of its turns than they need: today's
   * over the (agent_id, created_at) index, and for `total` at most `totalUpTo` turns ever (the `max_total_requests`
   * limit; none without it). With `month` (a monthly limit set), this UTC month's earlier days come from their totals
   * in `agent_usage_days`, each written the first time a check needs it, once the day is closed: 5 minutes after its
   * end, so a turn stored as the day ended is in it. Summing every turn the agent ever had made each turn of a limited
   * agent slower as its history grew. The month's figures are `null` without `month`.
   */
  async agentUsage(agentId: string, windows: { month: boolean; totalUpTo: number | null }): Promise<AgentUsage> {
    // Window starts are expressions of the statement, not joined rows, and the statement is planned for its values
    // each time (not prepared): the planner sees how much of the index a window spans and scans only that range.
    const [row] = await this.db.query<AgentUsage>(
      `WITH closed AS (
         SELECT d::date AS day FROM generate_series(${MONTH_START}, ${CLOSED_DAY} - interval '1 day', interval '1 day') d WHERE $2
       ), totalled AS (
         INSERT INTO agent_usage_days (agent_id, day, turns, tokens, cost_usd)
         SELECT $1, c.day, count(t.id), COALESCE(sum(t.total_tokens), 0), COALESCE(sum(t.estimated_cost_usd), 0)
         FROM closed c LEFT JOIN conversation_turns t ON t.agent_id = $1 AND t.counts_toward_limits
           AND t.created_at >= c.day::timestamp AT TIME ZONE 'UTC' AND t.created_at < (c.day + 1)::timestamp AT TIME ZONE 'UTC'
         WHERE NOT EXISTS (SELECT 1 FROM agent_usage_days u WHERE u.agent_id = $1 AND u.day = c.day)
         GROUP BY c.day
         ON CONFLICT (agent_id, day) DO UPDATE SET turns = EXCLUDED.turns, tokens = EXCLUDED.tokens, cost_usd = EXCLUDED.cost_usd
         RETURNING tokens, cost_usd
       ), days AS (
         SELECT COALESCE(sum(tokens), 0) AS tokens, COALESCE(sum(cost_usd), 0) AS cost FROM (
           SELECT u.tokens, u.cost_usd FROM agent_usage_days u JOIN closed c ON u.agent_id = $1 AND u.day = c.day
           UNION ALL SELECT tokens, cost_usd FROM totalled) x
       ), recent AS (
         SELECT count(*) FILTER (WHERE t.created_at >= ${UTC_DAY}) AS today,
                COALESCE(sum(t.total_tokens) FILTER (WHERE t.created_at >= ${UTC_DAY}), 0) AS tokens_today,
                COALESCE(sum(t.estimated_cost_usd) FILTER (WHERE t.created_at >= ${UTC_DAY}), 0) AS cost_today,
                COALESCE(sum(t.total_tokens), 0) AS tokens, COALESCE(sum(t.estimated_cost_usd), 0) AS cost
         FROM conversation_turns t
         WHERE t.agent_id = $1 AND t.counts_toward_limits
           AND t.created_at >= CASE WHEN $2 THEN GREATEST(${MONTH_START}, ${CLOSED_DAY}) AT TIME ZONE 'UTC' ELSE ${UTC_DAY} END
       )
       SELECT (SELECT count(*) FROM (SELECT 1 FROM conversation_turns WHERE agent_id = $1 AND counts_toward_limits LIMIT $3) n)::text AS total,
              r.today::text, r.tokens_today::text, r.cost_today::text,
              CASE WHEN $2 THEN (r.tokens + d.tokens)::text END AS tokens_month,
              CASE WHEN $2 THEN (r.cost + d.cost)::text END AS cost_month
       FROM recent r, days d`,
      { bind: [agentId, windows.month, windows.totalUpTo ?? 0], type: QueryTypes.SELECT },
    );
    return row!;
  }

  /** Every turn of the agent, summed by usage source: tokens, turns, estimated costs and the turns without pricing. */
  usageBySource(agentId: string): Promise<UsageGroup[]> {
    return this.db.query<UsageGroup>(
      `SELECT token_usage_source, sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, count(*) AS interactions,
              count(*) FILTER (WHERE estimated_cost_usd IS NOT NULL AND token_usage_source <> 'no_model_invocation') AS estimated,
              count(*) FILTER (WHERE pricing_missing) AS missing,
              COALESCE(sum(estimated_input_cost_usd), 0) AS input_cost, COALESCE(sum(estimated_output_cost_usd), 0) AS output_cost,
              COALESCE(sum(estimated_cost_usd), 0) AS total_cost
       FROM conversation_turns WHERE agent_id = $1 GROUP BY token_usage_source`,
      { bind: [agentId], type: QueryTypes.SELECT },
    );
  }

  /**
   * The agent's turns of each of the last `days` UTC days, today included, oldest first (zeros for a day without
   * turns), over the (agent_id, created_at) index.
   */
  usageByDay(agentId: string, days: number): Promise<{ date: string; turns: string; input_tokens: string; output_tokens: string; cost: string }[]> {
    return this.db.query(
      `SELECT to_char(d.day, 'YYYY-MM-DD') AS date, count(t.id) AS turns,
              COALESCE(sum(t.input_tokens), 0) AS input_tokens, COALESCE(sum(t.output_tokens), 0) AS output_tokens,
              COALESCE(sum(t.estimated_cost_usd), 0) AS cost
       FROM generate_series((now() AT TIME ZONE 'UTC')::date - ($2::int - 1), (now() AT TIME ZONE 'UTC')::date, interval '1 day') AS d(day)
       LEFT JOIN conversation_turns t
         ON t.agent_id = $1 AND t.created_at >= d.day AT TIME ZONE 'UTC' AND t.created_at < (d.day + interval '1 day') AT TIME ZONE 'UTC'
       GROUP BY d.day ORDER BY d.day`,
      { bind: [agentId, days], type: QueryTypes.SELECT },
    );
  }

  /** The agent's counted turns ever, and the requests it answers now (live leases). */
  async requestCounts(agentId: string): Promise<{ total: number; active: number }> {
    const [row] = await this.db.query<{ total: string; active: string }>(
      `SELECT (SELECT count(*) FROM conversation_turns WHERE agent_id = $1 AND counts_toward_limits) AS total,
              (SELECT count(*) FROM agent_request_leases WHERE agent_id = $1 AND expires_at > now()) AS active`,
      { bind: [agentId], type: QueryTypes.SELECT },
    );
    return { total: Number(row!.total), active: Number(row!.active) };
  }

  /**
   * A lease of `seconds` on one of the agent's `max` slots, serialised per agent by a transaction-scoped advisory lock;
   * `undefined` when every slot is held.
   */
  takeLease(agentId: string, max: number, instanceId: string, seconds: number): Promise<string | undefined> {
    return this.db.transaction(async (transaction) => {
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
        { bind: [leaseId, agentId, instanceId, seconds], transaction },
      );
      return leaseId;
    });
  }

  async renewLease(leaseId: string, seconds: number): Promise<void> {
    await this.db.query('UPDATE agent_request_leases SET expires_at = now() + make_interval(secs => $2) WHERE id = $1', { bind: [leaseId, seconds] });
  }

  /** Drops the lease, by its key (expired ones are swept apart, `sweepLapsedLeases`). */
  async releaseLease(leaseId: string): Promise<void> {
    await this.db.query('DELETE FROM agent_request_leases WHERE id = $1', { bind: [leaseId] });
  }

  /** Drops the leases that expired, a crashed instance's, which no turn will release; how many. */
  sweepLapsedLeases(): Promise<number> {
    return deletedCount(this.db, 'DELETE FROM agent_request_leases WHERE expires_at < now()');
  }
}
