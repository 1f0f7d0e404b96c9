import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { useCan } from '../session';
import { buttonColumn, When } from './data-table';
import { CallAudit } from './call-audit';
import { MountSection } from './mount-section';
import { ErrorMessage } from './states';

type Mount = components['schemas']['McpMount'];

/** The agent's last MCP calls, newest first: the tool, its status and stage, latency, or why it failed. */
function McpCalls({ agentId }: { agentId: string }) {
  const calls = useQuery({
    queryKey: ['mcp-calls', agentId],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/mcp-calls', { params: { path: { agent_id: agentId }, query: { limit: 20 } } })),
  });
  return (
    <CallAudit
      empty="No MCP call yet."
      caption="MCP calls"
      query={calls}
      rowKey={(call) => call.call_id}
      columns={[
        { header: 'When', cell: (call) => <When at={call.created_at} /> },
        { header: 'Server', cell: (call) => call.server_name ?? '' },
        { header: 'Tool', cell: (call) => call.tool_name },
        { header: 'Status', cell: (call) => `${call.status}${call.stage ? ` (${call.stage})` : ''}` },
        { header: 'Latency', cell: (call) => (call.latency_ms === null ? '—' : `${call.latency_ms} ms`) },
        { header: 'Error', cell: (call) => call.error_message ?? call.reason ?? '' },
      ]}
    />
  );
}

/**
 * The MCP servers a chat agent may call, each with its policy (allowed tools, calls a turn, timeout, operator
 * approval): mount one more, or unmount (with mcp.write).
 */
export function AgentToolMounts({ agentId, mayWrite }: { agentId: string; mayWrite: boolean }) {
  const queries = useQueryClient();
  const mayAudit = useCan('conversations.read');
  const path = { params: { path: { agent_id: agentId } } };
  const [serverId, setServerId] = useState('');
  const [allowed, setAllowed] = useState('');
  const [maxCalls, setMaxCalls] = useState('');
  const [approval, setApproval] = useState<'none' | 'operator'>('none');
  const mounts = useQuery({ queryKey: ['mcp-mounts', agentId], queryFn: () => expectData(api.GET('/agents/{agent_id}/mcp-mounts', path)) });
  const servers = useQuery({
    queryKey: ['mcp-servers'],
    queryFn: () => expectData(api.GET('/mcp-servers', { params: { query: { limit: 100 } } })),
    enabled: mayWrite,
  });
  const refresh = () => queries.invalidateQueries({ queryKey: ['mcp-mounts', agentId] });
  const mount = useMutation<unknown, ApiError>({
    mutationFn: () => {
      const tools = allowed
        .split(',')
        .map((tool) => tool.trim())
        .filter(Boolean);
      return expectData(
        api.POST('/agents/{agent_id}/mcp-mounts', {
          ...path,
          body: {
            mcp_server_id: serverId,
            approval,
            ...(tools.length > 0 && { allowed_tools: tools }),
            ...(maxCalls && { max_calls_per_turn: Number(maxCalls) }),
          },
        }),
      );
    },
    onSuccess: async () => {
      setServerId('');
      setAllowed('');
      setMaxCalls('');
      await refresh();
    },
  });
  const unmount = useMutation<unknown, ApiError, string>({
    mutationFn: (mountId) => expectData(api.DELETE('/agents/{agent_id}/mcp-mounts/{mount_id}', { params: { path: { agent_id: agentId, mount_id: mountId } } })),
    onSuccess: refresh,
  });
  const mounted = new Set(mounts.data?.items.map((m) => m.mcp_server_id));
  const offered = (servers.data?.items ?? []).filter((s) => !mounted.has(s.mcp_server_id));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (serverId) mount.mutate();
  };

  return (
    <MountSection
      id="tool-mounts-heading"
      title="Tools"
      query={mounts}
      what="tool mounts"
      empty="No MCP server mounted."
      columns={[
        { header: 'Server', cell: (m) => `${m.server_name ?? m.mcp_server_id} (${m.server_status ?? '—'})` },
        { header: 'Allowed tools', cell: (m) => m.allowed_tools?.join(', ') ?? 'all' },
        { header: 'Calls a turn', cell: (m) => m.max_calls_per_turn },
        { header: 'Approval', cell: (m) => m.approval },
        ...buttonColumn<Mount>(
          mayWrite,
          'Unmount',
          (m) => `Unmount ${m.server_name ?? m.mcp_server_id}`,
          (m) => unmount.mutate(m.mount_id),
        ),
      ]}
    >
      {mayWrite && offered.length > 0 && (
        <form className="form" onSubmit={submit} aria-label="Mount an MCP server">
          <label htmlFor="tool-mount-server">Server</label>
          <select id="tool-mount-server" value={serverId} onChange={(e) => setServerId(e.target.value)}>
            <option value="">Choose a server</option>
            {offered.map((s) => (
              <option key={s.mcp_server_id} value={s.mcp_server_id}>
                {s.name}
              </option>
            ))}
          </select>
          <label htmlFor="tool-mount-allowed">Allowed tools (comma-separated; empty allows all)</label>
          <input id="tool-mount-allowed" value={allowed} onChange={(e) => setAllowed(e.target.value)} />
          <label htmlFor="tool-mount-calls">Calls a turn</label>
          <input id="tool-mount-calls" inputMode="numeric" value={maxCalls} onChange={(e) => setMaxCalls(e.target.value)} />
          <label htmlFor="tool-mount-approval">Approval</label>
          <select id="tool-mount-approval" value={approval} onChange={(e) => setApproval(e.target.value as 'none' | 'operator')}>
            <option value="none">none</option>
            <option value="operator">operator</option>
          </select>
          <button type="submit" disabled={!serverId || mount.isPending}>
            Mount server
          </button>
        </form>
      )}
      {(mount.error ?? unmount.error) && <ErrorMessage error={mount.error ?? unmount.error} action="change the tool mounts" />}
      {mayAudit && <McpCalls agentId={agentId} />}
    </MountSection>
  );
}
