import type { AgentView } from '../../agents/agents.js';
import type { Lease, RequestLimits } from '../request-limits.js';
import { refusal } from './turn-request.js';

/**
 * Stage 4, the request limits (spec 4.2 rule 6, part 8): the agent's cumulative limits, the caller's daily quota and
 * the agent's concurrency, refused with their codes. The caller's turns today come counted from the session stage. Resolves with the concurrency slot the turn holds until it is
 * stored, when the agent limits concurrency.
 */
export async function enterLimits(
  limits: RequestLimits,
  agent: AgentView | null,
  callerKey: string | null,
  callerTurnsToday: number | null,
): Promise<Lease | null> {
  const agentLimit = agent && (await limits.exceeded(agent.agent_id, agent));
  if (agentLimit) throw refusal('AGENT_LIMIT_REACHED', agentLimit);
  const quota = await limits.callerExceeded(callerKey, callerTurnsToday);
  if (quota) throw refusal('QUOTA_REACHED', quota);
  const max = agent?.max_concurrent_requests;
  if (!agent || max == null) return null;
  const lease = await limits.acquire(agent.agent_id, max);
  if (!lease) throw refusal('AGENT_BUSY', `this agent is already answering ${max} requests; try again shortly`);
  return lease;
}
