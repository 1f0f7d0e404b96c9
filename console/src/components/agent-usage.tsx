import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type Agent } from '../api';
import { ErrorMessage, Loading } from './states';

type Day = components['schemas']['AgentUsageByDay']['days'][number];

const DAYS = 30;
const WIDTH = 600;
const HEIGHT = 140;
const usd = (value: number) => `$${value.toFixed(4)}`;

/**
 * Tokens a day as bars (an SVG drawn by hand: one chart does not need a charting library's weight). Each bar has a
 * title with the day's figures, and the whole chart a text summary for screen readers.
 */
function UsageChart({ days }: { days: Day[] }) {
  const peak = Math.max(0, ...days.map((day) => day.total_tokens));
  const scale = Math.max(1, peak);
  const slot = WIDTH / days.length;
  const total = days.reduce((sum, day) => sum + day.total_tokens, 0);
  const cost = days.reduce((sum, day) => sum + day.estimated_cost_usd, 0);
  const summary = `${total} tokens and ${usd(cost)} over ${days.length} days, at most ${peak} on one day`;
  return (
    <figure className="usage-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + 16}`} role="img" aria-label={summary}>
        {days.map((day, i) => {
          const height = Math.round((day.total_tokens / scale) * HEIGHT);
          return (
            <rect key={day.date} x={i * slot + 1} y={HEIGHT - height} width={slot - 2} height={Math.max(height, day.turns ? 1 : 0)} className="bar">
              <title>{`${day.date}: ${day.turns} turns, ${day.total_tokens} tokens, ${usd(day.estimated_cost_usd)}`}</title>
            </rect>
          );
        })}
        <line x1={0} y1={HEIGHT} x2={WIDTH} y2={HEIGHT} className="axis" />
        <text x={0} y={HEIGHT + 14} className="label">
          {days[0]?.date}
        </text>
        <text x={WIDTH} y={HEIGHT + 14} textAnchor="end" className="label">
          {days.at(-1)?.date}
        </text>
      </svg>
      <figcaption>Tokens a day, the last {days.length} days (UTC)</figcaption>
    </figure>
  );
}

/** One agent's cost overview (usage and estimated cost, USD, internal) and its tokens a day. */
function AgentUsage({ agentId }: { agentId: string }) {
  const path = { params: { path: { agent_id: agentId } } };
  const overview = useQuery({ queryKey: ['cost-overview', agentId], queryFn: () => expectData(api.GET('/agents/{agent_id}/cost-overview', path)) });
  const byDay = useQuery({
    queryKey: ['usage-by-day', agentId],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/usage-by-day', { params: { path: { agent_id: agentId }, query: { days: DAYS } } })),
  });
  if (overview.isPending || byDay.isPending) return <Loading what="the usage" />;
  if (overview.isError) return <ErrorMessage error={overview.error} action="read the cost overview" />;
  if (byDay.isError) return <ErrorMessage error={byDay.error} action="read the usage by day" />;
  const o = overview.data;
  return (
    <>
      <dl className="facts">
        <dt>Conversations</dt>
        <dd>
          {o.conversation_usage_rollup.total_tokens} tokens, {usd(o.conversation_estimated_cost.total_cost_usd)}
        </dd>
        <dt>Evaluation</dt>
        <dd>
          {o.evaluation_generation_usage_rollup.total_tokens + o.evaluation_judge_usage_rollup.total_tokens} tokens,{' '}
          {usd(o.evaluation_generation_estimated_cost.total_cost_usd + o.evaluation_judge_estimated_cost.total_cost_usd)}
        </dd>
        <dt>Estimated cost</dt>
        <dd>
          {usd(o.combined_estimated_cost.total_cost_usd)}
          {o.combined_estimated_cost.missing_pricing_count ? ` (${o.combined_estimated_cost.missing_pricing_count} calls without a price)` : ''}
        </dd>
        <dt>Requests</dt>
        <dd>
          {o.total_request_count} in all, {o.active_request_count} now{o.remaining_total_requests === null ? '' : `, ${o.remaining_total_requests} left`}
        </dd>
      </dl>
      <UsageChart days={byDay.data.days} />
    </>
  );
}

/** The dashboard's usage section: an agent chosen from the list, its cost overview and its chart. */
export function UsageSection({ agents }: { agents: Agent[] }) {
  const [agentId, setAgentId] = useState('');
  const chosen = agentId || agents[0]?.agent_id || '';
  return (
    <section aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage and cost</h2>
      {agents.length === 0 ? (
        <p className="muted">No agent yet.</p>
      ) : (
        <>
          <label htmlFor="usage-agent">Agent</label>{' '}
          <select id="usage-agent" value={chosen} onChange={(e) => setAgentId(e.target.value)}>
            {agents.map((agent) => (
              <option key={agent.agent_id} value={agent.agent_id}>
                {agent.name}
              </option>
            ))}
          </select>
          <AgentUsage agentId={chosen} />
        </>
      )}
    </section>
  );
}
