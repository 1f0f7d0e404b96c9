import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { useCan } from '../session';
import { When } from './data-table';
import { CallAudit } from './call-audit';
import { MountSection } from './mount-section';
import { ErrorMessage } from './states';

type Mount = components['schemas']['SkillMount'];

/** The released versions of one skill, newest first, for the mount form. */
function useReleasedVersions(skillId: string) {
  return useQuery({
    queryKey: ['skill-versions', skillId, 'released'],
    enabled: Boolean(skillId),
    queryFn: () =>
      expectData(api.GET('/skills/{skill_id}/versions', { params: { path: { skill_id: skillId }, query: { released_only: 'true', limit: 100 } } })),
  });
}

/** The agent's last skill calls, newest first: what ran, its status and latency, or why it failed. */
function SkillCalls({ agentId }: { agentId: string }) {
  const calls = useQuery({
    queryKey: ['skill-calls', agentId],
    queryFn: () => expectData(api.GET('/agents/{agent_id}/skill-calls', { params: { path: { agent_id: agentId }, query: { limit: 20 } } })),
  });
  return (
    <CallAudit
      empty="No skill call yet."
      caption="Skill calls"
      query={calls}
      rowKey={(call) => call.skill_call_id}
      columns={[
        { header: 'When', cell: (call) => <When at={call.created_at} /> },
        { header: 'Skill', cell: (call) => `${call.skill_name}${call.version_number ? ` v${call.version_number}` : ''}` },
        { header: 'Tool', cell: (call) => call.tool_name ?? '' },
        { header: 'Status', cell: (call) => call.status },
        { header: 'Latency', cell: (call) => (call.latency_ms === null ? '—' : `${call.latency_ms} ms`) },
        { header: 'Error', cell: (call) => call.error_message ?? '' },
      ]}
    />
  );
}

/**
 * A chat agent's skills: the released versions it runs before its tools, each with its policy (priority, timeout,
 * calls a turn, allowed tools, active); mount one more, pause or unmount one, and the audit of the last calls.
 */
export function AgentSkillMounts({ agentId }: { agentId: string }) {
  // Mounting changes the agent too, so the host asks for both.
  const maySkills = useCan('skills.write');
  const mayAgents = useCan('agents.write');
  const mayWrite = maySkills && mayAgents;
  const mayAudit = useCan('conversations.read');
  const queries = useQueryClient();
  const path = { params: { path: { agent_id: agentId } } };
  const [skillId, setSkillId] = useState('');
  const [versionId, setVersionId] = useState('');
  const [priority, setPriority] = useState('');
  const [timeout, setTimeoutMs] = useState('');
  const [allowlist, setAllowlist] = useState('');
  const mounts = useQuery({ queryKey: ['skill-mounts', agentId], queryFn: () => expectData(api.GET('/agents/{agent_id}/skill-mounts', path)) });
  const skills = useQuery({
    queryKey: ['skills', 'active'],
    enabled: mayWrite,
    queryFn: () => expectData(api.GET('/skills', { params: { query: { status: 'active', limit: 100 } } })),
  });
  const versions = useReleasedVersions(skillId);
  const chosenVersion = versionId || versions.data?.items[0]?.version_id || '';
  const refresh = () => queries.invalidateQueries({ queryKey: ['skill-mounts', agentId] });
  const mount = useMutation<unknown, ApiError>({
    mutationFn: () => {
      const tools = allowlist
        .split(',')
        .map((tool) => tool.trim())
        .filter(Boolean);
      return expectData(
        api.POST('/agents/{agent_id}/skill-mounts', {
          ...path,
          body: {
            skill_version_id: chosenVersion,
            ...(priority && { priority: Number(priority) }),
            ...(timeout && { timeout_ms: Number(timeout) }),
            ...(tools.length > 0 && { tool_allowlist: tools }),
          },
        }),
      );
    },
    onSuccess: async () => {
      setSkillId('');
      setVersionId('');
      setPriority('');
      setTimeoutMs('');
      setAllowlist('');
      await refresh();
    },
  });
  const change = useMutation<unknown, ApiError, { mount: Mount; active?: boolean; remove?: boolean }>({
    mutationFn: ({ mount: m, active, remove }) => {
      const params = { params: { path: { agent_id: agentId, mount_id: m.mount_id } } };
      return remove
        ? expectData(api.DELETE('/agents/{agent_id}/skill-mounts/{mount_id}', params))
        : expectData(api.PATCH('/agents/{agent_id}/skill-mounts/{mount_id}', { ...params, body: { is_active: active } }));
    },
    onSuccess: refresh,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (chosenVersion) mount.mutate();
  };

  return (
    <MountSection
      id="skill-mounts-heading"
      title="Skills"
      query={mounts}
      what="skill mounts"
      empty="No skill mounted."
      columns={[
        { header: 'Skill', cell: (m) => `${m.skill_name} v${m.version_number}` },
        { header: 'Priority', cell: (m) => m.priority },
        { header: 'Timeout', cell: (m) => `${m.timeout_ms} ms` },
        { header: 'Calls a turn', cell: (m) => m.max_calls_per_turn },
        { header: 'Allowed tools', cell: (m) => m.tool_allowlist.join(', ') || 'all' },
        {
          header: 'State',
          cell: (m) => (
            <span className="toolbar">
              {m.is_active ? 'active' : 'paused'}
              {mayWrite && (
                <>
                  <button
                    type="button"
                    className="secondary"
                    onClick={() => change.mutate({ mount: m, active: !m.is_active })}
                    aria-label={`${m.is_active ? 'Pause' : 'Resume'} ${m.skill_name}`}
                  >
                    {m.is_active ? 'Pause' : 'Resume'}
                  </button>
                  <button type="button" className="secondary" onClick={() => change.mutate({ mount: m, remove: true })} aria-label={`Unmount ${m.skill_name}`}>
                    Unmount
                  </button>
                </>
              )}
            </span>
          ),
        },
      ]}
    >
      {(mount.error ?? change.error) && <ErrorMessage error={mount.error ?? change.error} action="change the skill mounts" />}
      {mayWrite && skills.data && skills.data.items.length > 0 && (
        <form className="form" onSubmit={submit} aria-label="Mount a skill">
          <label htmlFor="skill-mount-skill">Skill</label>
          <select
            id="skill-mount-skill"
            value={skillId}
            onChange={(e) => {
              setSkillId(e.target.value);
              setVersionId('');
            }}
          >
            <option value="">Choose a skill</option>
            {skills.data.items.map((skill) => (
              <option key={skill.skill_id} value={skill.skill_id}>
                {skill.name}
              </option>
            ))}
          </select>
          {skillId && versions.data?.items.length === 0 && <p className="muted">This skill has no released version to mount.</p>}
          {skillId && versions.data && versions.data.items.length > 0 && (
            <>
              <label htmlFor="skill-mount-version">Released version</label>
              <select id="skill-mount-version" value={chosenVersion} onChange={(e) => setVersionId(e.target.value)}>
                {versions.data.items.map((version) => (
                  <option key={version.version_id} value={version.version_id}>
                    v{version.version_number} ({version.backend_type})
                  </option>
                ))}
              </select>
            </>
          )}
          <label htmlFor="skill-mount-priority">Priority (higher runs first)</label>
          <input id="skill-mount-priority" inputMode="numeric" value={priority} onChange={(e) => setPriority(e.target.value)} />
          <label htmlFor="skill-mount-timeout">Timeout (ms)</label>
          <input id="skill-mount-timeout" inputMode="numeric" value={timeout} onChange={(e) => setTimeoutMs(e.target.value)} />
          <label htmlFor="skill-mount-tools">Allowed tools (comma-separated; empty allows all)</label>
          <input id="skill-mount-tools" value={allowlist} onChange={(e) => setAllowlist(e.target.value)} />
          <button type="submit" disabled={!chosenVersion || mount.isPending}>
            Mount skill
          </button>
        </form>
      )}
      {mayAudit && <SkillCalls agentId={agentId} />}
    </MountSection>
  );
}
