import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, useState, type FormEvent } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type Agent } from '../api';
import { useUpload } from '../upload';
import { DataTable, When } from './data-table';
import { ErrorMessage, ListStates } from './states';

type FusionRun = components['schemas']['FusionRun'];
type InputSlot = components['schemas']['FusionRuntimeMetadata']['input_slots'][number];

const POLL_MS = 1000;
const ENDED = new Set<FusionRun['status']>(['succeeded', 'failed']);

/** The draft definition's input slots (the agent's `fusion_definition`, a JSON object the host has validated). */
function inputSlots(agent: Agent): InputSlot[] {
  const slots = (agent.fusion_definition as { input_slots?: InputSlot[] } | null)?.input_slots;
  return Array.isArray(slots) ? slots : [];
}

/** A run's outputs: text as it came, structured JSON pretty-printed; else the error that ended it. */
function Outputs({ run }: { run: FusionRun }) {
  if (run.error) return <span className="field-error">{`${run.error.code}: ${run.error.message}`}</span>;
  if (!run.output_item_list) return null;
  return (
    <>
      {run.output_item_list.map((item) => (
        <div key={item.slot}>
          <strong>{item.slot}</strong>
          {typeof item.json_value === 'string' ? <p>{item.json_value}</p> : <pre className="code">{JSON.stringify(item.json_value, null, 2)}</pre>}
        </div>
      ))}
    </>
  );
}

/**
 * A Fusion agent's runs: the draft definition run on inputs typed or chosen per slot (files go up as multipart with
 * a progress bar), and every run, administrator and public, followed while it runs, with its outputs and usage.
 */
export function FusionRuns({ agent, mayRun }: { agent: Agent; mayRun: boolean }) {
  const queries = useQueryClient();
  const slots = inputSlots(agent);
  const [texts, setTexts] = useState<Record<string, string>>({});
  const [files, setFiles] = useState<Record<string, File | undefined>>({});
  const { progress, error, send } = useUpload();
  const runs = useQuery({
    queryKey: ['fusion-runs', agent.agent_id],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/fusion-runs', { params: { path: { agent_id: agent.agent_id }, query: { limit: 20 } } })),
    refetchInterval: (query) => (query.state.data?.items.some((run: FusionRun) => !ENDED.has(run.status)) ? POLL_MS : false),
  });

  async function run(event: FormEvent) {
    event.preventDefault();
    const form = new FormData();
    for (const slot of slots) {
      const file = files[slot.name];
      if (slot.kind === 'file' && file) form.append(slot.name, file);
      if (slot.kind === 'text' && texts[slot.name]) form.append(slot.name, texts[slot.name]!);
    }
    // Answered at once: the run is followed in the list below rather than held open here.
    if (await send<FusionRun>(`/agents/${agent.agent_id}/fusion-runs?wait_seconds=0`, form)) {
      await queries.invalidateQueries({ queryKey: ['fusion-runs', agent.agent_id] });
    }
  }

  return (
    <section aria-labelledby="fusion-runs-heading">
      <h2 id="fusion-runs-heading">Fusion runs</h2>
      {mayRun && slots.length > 0 && (
        <form className="form" onSubmit={(e) => void run(e)} aria-label="Run the draft">
          <p className="muted">Runs the draft definition; public callers run the published version.</p>
          {slots.map((slot) => (
            <Fragment key={slot.name}>
              <label htmlFor={`slot-${slot.name}`}>
                {slot.name}
                {slot.required === false ? ' (optional)' : ''}
                {slot.description ? `: ${slot.description}` : ''}
              </label>
              {slot.kind === 'file' ? (
                <input
                  id={`slot-${slot.name}`}
                  type="file"
                  accept={slot.accepted_content_types?.join(',') || undefined}
                  onChange={(e) => setFiles({ ...files, [slot.name]: e.target.files?.[0] })}
                />
              ) : (
                <textarea id={`slot-${slot.name}`} value={texts[slot.name] ?? ''} onChange={(e) => setTexts({ ...texts, [slot.name]: e.target.value })} />
              )}
            </Fragment>
          ))}
          {progress !== undefined && <progress max={1} value={progress} aria-label="Upload of the inputs" />}
          {error && <ErrorMessage error={error} action="run the agent" />}
          <button type="submit" disabled={progress !== undefined}>
            Run
          </button>
        </form>
      )}
      {mayRun && slots.length === 0 && <p className="muted">The draft definition has no input slots yet: add them under Fusion above.</p>}
      <ListStates query={runs} count={runs.data?.items.length} what="Fusion runs" empty="No run yet." />
      {runs.data && runs.data.items.length > 0 && (
        <DataTable
          compact
          rows={runs.data.items}
          rowKey={(run) => run.run_id}
          columns={[
            { header: 'Started', cell: (run) => <When at={run.created_at} /> },
            { header: 'Caller', cell: (run) => (run.authenticated_agent_api_key_id ? 'API key' : run.channel) },
            { header: 'Status', cell: (run) => `${run.status}${run.heartbeat_stale ? ' (heartbeat stale)' : ''}` },
            { header: 'Inputs', cell: (run) => run.inputs.map((input) => input.slot).join(', ') },
            { header: 'Outputs', cell: (run) => <Outputs run={run} /> },
            { header: 'Tokens', cell: (run) => run.generation_usage?.total_tokens ?? '—' },
          ]}
        />
      )}
    </section>
  );
}
