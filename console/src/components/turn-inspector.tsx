import { useQuery } from '@tanstack/react-query';
import { api, expectData } from '../api';
import { ErrorMessage, Loading } from './states';

type Row = Record<string, unknown>;

const LONGEST = 280;

/** A cell's text: scores to three places, long texts cut (the full text is the cell's title). */
const show = (value: unknown): string => {
  if (value === null || value === undefined) return '—';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(3);
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.length > LONGEST ? `${text.slice(0, LONGEST)}…` : text;
};

/** A list of records as a table of the columns asked for; records lack some, so each cell falls back to a dash. */
function RecordTable({ rows, columns, caption, none }: { rows: Row[]; columns: string[]; caption: string; none: string }) {
  if (rows.length === 0) return <p className="muted">{none}</p>;
  return (
    <table className="compact">
      <caption>{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => (
            <th key={column} scope="col">
              {column.replaceAll('_', ' ')}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row, index) => (
          <tr key={index}>
            {columns.map((column) => (
              <td key={column} title={typeof row[column] === 'string' ? row[column] : undefined}>
                {show(row[column])}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Why a reply is what it is, from the turn's stored context (`GET /sessions/{id}/turns/{id}/context`): the model and
 * how routing chose it, the chunks retrieval handed on with their scores and sources, the skill and MCP calls with
 * their status, and the usage and cost.
 */
export function TurnInspector({ sessionId, turnId }: { sessionId: string; turnId: string }) {
  const context = useQuery({
    queryKey: ['turn-context', sessionId, turnId],
    queryFn: () => expectData(api.GET('/sessions/{session_id}/turns/{turn_id}/context', { params: { path: { session_id: sessionId, turn_id: turnId } } })),
  });
  if (context.isPending) return <Loading what="the turn" />;
  if (context.isError) return <ErrorMessage error={context.error} action="read the turn" />;
  const { turn, context_payload: payload = {}, rag_context: chunks = [], skill_calls: skillCalls = [], mcp_calls: mcpCalls = [] } = context.data;
  const routing = (payload.model_routing ?? {}) as { route_mode?: string; stage_decisions?: Row[] };
  // The grounding decision of an agent with a grounding policy (docs/api-decisions.md); null for the others.
  const grounding = payload.grounding as
    { path: string; grounded: boolean | null; confidence: number | null; low_confidence_reason: string | null; citations: Row[] } | null | undefined;
  const usage = turn.generation_usage;
  return (
    <section aria-label="Turn inspector" className="inspector">
      <dl className="facts">
        <div>
          <dt>status</dt>
          <dd>{turn.status}</dd>
        </div>
        <div>
          <dt>source</dt>
          <dd>{turn.response_source}</dd>
        </div>
        <div>
          <dt>model</dt>
          <dd>{turn.model_name ? `${turn.model_provider ?? ''} ${turn.model_name}`.trim() : '—'}</dd>
        </div>
        <div>
          <dt>routing</dt>
          <dd>{routing.route_mode ?? '—'}</dd>
        </div>
        {grounding && (
          <div>
            <dt>grounding</dt>
            <dd>
              {grounding.path.replaceAll('_', ' ')}
              {grounding.confidence === null ? '' : `, confidence ${show(grounding.confidence)}`}
              {grounding.low_confidence_reason ? ` (${grounding.low_confidence_reason.replaceAll('_', ' ')})` : ''}
            </dd>
          </div>
        )}
        <div>
          <dt>tokens (in / out)</dt>
          <dd>
            {usage.input_tokens} / {usage.output_tokens} ({usage.token_usage_source})
          </dd>
        </div>
        <div>
          <dt>cost</dt>
          <dd>{turn.estimated_cost_usd === null ? '—' : `$${turn.estimated_cost_usd.toFixed(6)}`}</dd>
        </div>
        <div>
          <dt>first token / total</dt>
          <dd>
            {show(turn.first_token_ms)} ms / {turn.latency_ms} ms
          </dd>
        </div>
      </dl>
      <RecordTable
        caption="Routing decisions"
        rows={routing.stage_decisions ?? []}
        columns={['stage', 'model_provider', 'model_name', 'reason']}
        none="No routing decision."
      />
      {grounding && (
        <RecordTable
          caption="Citations"
          rows={grounding.citations}
          columns={['evidence_id', 'kind', 'source_name', 'document_filename', 'text']}
          none="No citation."
        />
      )}
      <RecordTable caption="Retrieved chunks" rows={chunks} columns={['score', 'source_name', 'document_filename', 'content']} none="No retrieved chunks." />
      <RecordTable
        caption="Skill calls"
        rows={skillCalls}
        columns={['skill_name', 'tool_name', 'status', 'latency_ms', 'error_message']}
        none="No skill calls."
      />
      <RecordTable caption="MCP calls" rows={mcpCalls} columns={['server_name', 'tool_name', 'status', 'latency_ms', 'error_message']} none="No MCP calls." />
    </section>
  );
}
