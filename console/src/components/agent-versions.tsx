import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { api, expectData, type Agent, type ApiError } from '../api';
import { ALL_FIELDS } from '../agent-fields';
import { DataTable, When } from './data-table';
import { Empty, ErrorMessage, Loading } from './states';

const shown = (value: unknown) => (value === null || value === undefined ? '—' : typeof value === 'object' ? JSON.stringify(value) : String(value));

/** The fields where a version's snapshot and the live agent differ. */
function Diff({ snapshot, agent }: { snapshot: Record<string, unknown>; agent: Agent }) {
  const changed = ALL_FIELDS.filter((field) => JSON.stringify(snapshot[field.key] ?? null) !== JSON.stringify(agent[field.key] ?? null));
  if (changed.length === 0) return <p className="muted">The live configuration is the same as this version.</p>;
  return (
    <DataTable
      compact
      rows={changed}
      rowKey={(field) => field.key}
      columns={[
        { header: 'Field', cell: (field) => field.label },
        { header: 'This version', cell: (field) => <code>{shown(snapshot[field.key])}</code> },
        { header: 'Live', cell: (field) => <code>{shown(agent[field.key])}</code> },
      ]}
    />
  );
}

/**
 * The agent's versions, newest first: store the live configuration as a version (with a note), publish it, see how a
 * version differs from the live configuration, and roll back to one (the host snapshots the current one first).
 */
export function AgentVersions({ agent, mayWrite, onRestored }: { agent: Agent; mayWrite: boolean; onRestored: () => void }) {
  const agentId = agent.agent_id;
  const queries = useQueryClient();
  const [note, setNote] = useState('');
  const [compared, setCompared] = useState<string>();
  const versions = useQuery({
    queryKey: ['agent-versions', agentId],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/versions', { params: { path: { agent_id: agentId } } })),
  });
  const refresh = async () => {
    await queries.invalidateQueries({ queryKey: ['agent-versions', agentId] });
    await queries.invalidateQueries({ queryKey: ['agent', agentId] });
  };
  const store = useMutation<unknown, ApiError>({
    mutationFn: () => expectData(api.POST('/agents/{agent_id}/versions', { params: { path: { agent_id: agentId } }, body: { note: note || null } })),
    onSuccess: async () => {
      setNote('');
      await refresh();
    },
  });
  const publish = useMutation<unknown, ApiError>({
    mutationFn: () => expectData(api.POST('/agents/{agent_id}/publish', { params: { path: { agent_id: agentId } } })),
    onSuccess: refresh,
  });
  const rollback = useMutation<unknown, ApiError, string>({
    mutationFn: (versionId) =>
      expectData(api.POST('/agents/{agent_id}/versions/{version_id}/rollback', { params: { path: { agent_id: agentId, version_id: versionId } } })),
    onSuccess: async () => {
      await refresh();
      onRestored();
    },
  });
  const failure = store.error ?? publish.error ?? rollback.error;
  const items = versions.data?.items ?? [];
  const comparedVersion = items.find((v) => v.version_id === compared);
  // Only Fusion agents run a published snapshot; every other type runs its live configuration (the host refuses).
  const publishable = agent.agent_type === 'fusion';

  return (
    <section aria-labelledby="versions-heading">
      <h2 id="versions-heading">Versions</h2>
      <p className="muted">
        {publishable
          ? `Published version: ${items.find((v) => v.version_id === agent.published_agent_version_id)?.version_number ?? 'none'}`
          : `A ${agent.agent_type} agent runs its live configuration; versions keep its history.`}
      </p>
      {mayWrite && (
        <div className="toolbar">
          <label htmlFor="version-note">Note</label>
          <input id="version-note" value={note} onChange={(e) => setNote(e.target.value)} />
          <button type="button" onClick={() => store.mutate()} disabled={store.isPending}>
            Save as version
          </button>
          {publishable && (
            <button type="button" onClick={() => publish.mutate()} disabled={publish.isPending}>
              Publish
            </button>
          )}
        </div>
      )}
      {failure && <ErrorMessage error={failure} action="change the versions" />}
      {versions.isPending && <Loading what="versions" />}
      {versions.isError && <ErrorMessage error={versions.error} action="list the versions" />}
      {versions.isSuccess && items.length === 0 && <Empty>No version yet.</Empty>}
      {items.length > 0 && (
        <DataTable
          compact
          rows={items}
          rowKey={(v) => v.version_id}
          columns={[
            { header: 'Version', cell: (v) => v.version_number },
            { header: 'Why', cell: (v) => v.reason },
            { header: 'Note', cell: (v) => v.note ?? '—' },
            { header: 'Made', cell: (v) => <When at={v.created_at} /> },
            {
              header: 'Actions',
              cell: (v) => (
                <span className="toolbar">
                  <button
                    type="button"
                    className="secondary"
                    aria-pressed={compared === v.version_id}
                    onClick={() => setCompared(compared === v.version_id ? undefined : v.version_id)}
                  >
                    Compare {v.version_number}
                  </button>
                  {mayWrite && (
                    <button type="button" className="secondary" onClick={() => rollback.mutate(v.version_id)} disabled={rollback.isPending}>
                      Roll back to {v.version_number}
                    </button>
                  )}
                </span>
              ),
            },
          ]}
        />
      )}
      {comparedVersion && (
        <>
          <h3>Version {comparedVersion.version_number} against the live configuration</h3>
          <Diff snapshot={comparedVersion.snapshot as Record<string, unknown>} agent={agent} />
        </>
      )}
    </section>
  );
}
