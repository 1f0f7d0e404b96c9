import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { buttonColumn } from './data-table';
import { MountSection } from './mount-section';
import { ErrorMessage } from './states';

type Mount = components['schemas']['KnowledgeMount'];

/** The knowledge sources an agent retrieves from: mount one more, or unmount (with knowledge.write). */
export function AgentMounts({ agentId, mayWrite }: { agentId: string; mayWrite: boolean }) {
  const queries = useQueryClient();
  const [chosen, setChosen] = useState('');
  const path = { params: { path: { agent_id: agentId } } };
  const mounts = useQuery({ queryKey: ['mounts', agentId], queryFn: () => expectData(api.GET('/agents/{agent_id}/mounts', path)) });
  const sources = useQuery({
    queryKey: ['knowledge-sources', 'all'],
    queryFn: () => expectData(api.GET('/knowledge-sources', { params: { query: { limit: 100 } } })),
    enabled: mayWrite,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['mounts', agentId] });
  const mount = useMutation<unknown, ApiError, string>({
    mutationFn: (sourceId) => expectData(api.POST('/agents/{agent_id}/mounts', { ...path, body: { source_id: sourceId } })),
    onSuccess: async () => {
      setChosen('');
      await refresh();
    },
  });
  const unmount = useMutation<unknown, ApiError, string>({
    mutationFn: (mountId) => expectData(api.DELETE('/agents/{agent_id}/mounts/{mount_id}', { params: { path: { agent_id: agentId, mount_id: mountId } } })),
    onSuccess: refresh,
  });
  const mounted = new Set(mounts.data?.items.map((m) => m.source_id));
  const offered = (sources.data?.items ?? []).filter((s) => !mounted.has(s.source_id) && s.source_kind === 'standard');

  return (
    <MountSection
      id="mounts-heading"
      title="Knowledge"
      query={mounts}
      what="mounts"
      empty="No knowledge source mounted."
      columns={[
        { header: 'Source', cell: (m) => m.source_name ?? m.source_id },
        ...buttonColumn<Mount>(
          mayWrite,
          'Unmount',
          (m) => `Unmount ${m.source_name ?? m.source_id}`,
          (m) => unmount.mutate(m.mount_id),
        ),
      ]}
    >
      {mayWrite && offered.length > 0 && (
        <div className="toolbar">
          <label htmlFor="mount-source">Source</label>
          <select id="mount-source" value={chosen} onChange={(e) => setChosen(e.target.value)}>
            <option value="">Choose a source</option>
            {offered.map((s) => (
              <option key={s.source_id} value={s.source_id}>
                {s.name}
              </option>
            ))}
          </select>
          <button type="button" disabled={!chosen || mount.isPending} onClick={() => mount.mutate(chosen)}>
            Mount
          </button>
        </div>
      )}
      {(mount.error ?? unmount.error) && <ErrorMessage error={mount.error ?? unmount.error} action="change the mounts" />}
    </MountSection>
  );
}
