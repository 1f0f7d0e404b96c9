import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { JsonField, parseJson } from '../components/json-field';
import { ErrorMessage, ListStates, Loading } from '../components/states';
import { useCan } from '../session';

type Skill = components['schemas']['Skill'];
type SkillVersion = components['schemas']['SkillVersion'];

/**
 * A draft version's form: a new draft, or `draft` edited in place. Its backend (`mcp`: one tool of an MCP server,
 * chosen here) and its config as JSON, checked before sending. Drafts are released from the list; a released version
 * never changes.
 */
function VersionForm({ skillId, draft, onSaved }: { skillId: string; draft?: SkillVersion; onSaved: () => void }) {
  const [backendType, setBackendType] = useState(draft?.backend_type ?? 'mcp');
  const [serverId, setServerId] = useState(draft?.backend_ref_id ?? '');
  const [config, setConfig] = useState(draft ? JSON.stringify(draft.config, null, 2) : '{\n  "tool_name": "",\n  "query_argument": ""\n}');
  const [invalid, setInvalid] = useState<string>();
  const servers = useQuery({ queryKey: ['mcp-servers'], queryFn: () => expectData(api.GET('/mcp-servers', { params: { query: { limit: 100 } } })) });
  const save = useMutation<SkillVersion, ApiError, Record<string, unknown>>({
    mutationFn: (parsed) => {
      const body = { backend_type: backendType, backend_ref_id: serverId || null, config: parsed };
      return expectData(
        draft
          ? api.PATCH('/skills/{skill_id}/versions/{version_id}', { params: { path: { skill_id: skillId, version_id: draft.version_id } }, body })
          : api.POST('/skills/{skill_id}/versions', { params: { path: { skill_id: skillId } }, body }),
      );
    },
    onSuccess: onSaved,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseJson(config);
    const notObject = 'value' in parsed && (typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value));
    setInvalid('error' in parsed ? parsed.error : notObject ? 'must be a JSON object' : undefined);
    if ('value' in parsed && !notObject) save.mutate(parsed.value as Record<string, unknown>);
  };
  const title = draft ? `Draft version ${draft.version_number}` : 'New version';
  const id = draft ? `draft-${draft.version_id}` : 'version';
  return (
    <form className="form" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      <label htmlFor={`${id}-backend`}>Backend</label>
      <input id={`${id}-backend`} value={backendType} onChange={(e) => setBackendType(e.target.value)} />
      <label htmlFor={`${id}-server`}>MCP server (the backend's reference)</label>
      <select id={`${id}-server`} value={serverId} onChange={(e) => setServerId(e.target.value)}>
        <option value="">None</option>
        {servers.data?.items.map((server) => (
          <option key={server.mcp_server_id} value={server.mcp_server_id}>
            {server.name} ({server.status})
          </option>
        ))}
      </select>
      <JsonField id={`${id}-config`} label="Config (JSON)" value={config} onChange={setConfig} error={invalid} />
      {save.error && <ErrorMessage error={save.error} action={draft ? 'save the draft' : 'make the version'} />}
      <button type="submit" disabled={save.isPending}>
        Save draft
      </button>
    </form>
  );
}

/** One skill: its status, its versions (drafts released from here), and new drafts. */
export function SkillPage() {
  const skillId = useParams().skillId!;
  const mayWrite = useCan('skills.write');
  const queries = useQueryClient();
  const path = { params: { path: { skill_id: skillId } } };
  const skill = useQuery({ queryKey: ['skill', skillId], queryFn: () => expectData(api.GET('/skills/{skill_id}', path)) });
  const versions = useQuery({
    queryKey: ['skill-versions', skillId],
    queryFn: () => expectData(api.GET('/skills/{skill_id}/versions', { params: { path: { skill_id: skillId }, query: { limit: 100 } } })),
  });
  const refresh = async () => {
    await queries.invalidateQueries({ queryKey: ['skill', skillId] });
    await queries.invalidateQueries({ queryKey: ['skill-versions', skillId] });
  };
  const [editing, setEditing] = useState<SkillVersion>();
  const setStatus = useMutation<Skill, ApiError, Skill['status']>({
    mutationFn: (status) => expectData(api.PATCH('/skills/{skill_id}', { ...path, body: { status } })),
    onSuccess: refresh,
  });
  const release = useMutation<SkillVersion, ApiError, string>({
    mutationFn: (versionId) =>
      expectData(api.POST('/skills/{skill_id}/versions/{version_id}/release', { params: { path: { skill_id: skillId, version_id: versionId } } })),
    onSuccess: refresh,
  });

  if (skill.isPending) return <Loading what="the skill" />;
  if (skill.isError) return <ErrorMessage error={skill.error} action="read the skill" />;
  const s = skill.data;
  return (
    <>
      <h1>{s.name}</h1>
      <p className="muted">
        {s.status} · {s.version_count} versions
      </p>
      {s.description && <p>{s.description}</p>}
      {mayWrite && (
        <div className="toolbar">
          <button
            type="button"
            className="secondary"
            onClick={() => setStatus.mutate(s.status === 'active' ? 'disabled' : 'active')}
            disabled={setStatus.isPending}
          >
            {s.status === 'active' ? 'Disable' : 'Enable'}
          </button>
        </div>
      )}
      {setStatus.error && <ErrorMessage error={setStatus.error} action="change the status" />}
      <section aria-labelledby="versions-heading">
        <h2 id="versions-heading">Versions</h2>
        <ListStates query={versions} count={versions.data?.items.length} what="versions" empty="No version yet." />
        {release.error && <ErrorMessage error={release.error} action="release the version" />}
        {versions.data && versions.data.items.length > 0 && (
          <DataTable
            compact
            rows={versions.data.items}
            rowKey={(version) => version.version_id}
            columns={[
              { header: 'Version', cell: (version) => version.version_number },
              { header: 'Backend', cell: (version) => `${version.backend_type}${version.backend_ref_id ? ` · ${version.backend_ref_id}` : ''}` },
              { header: 'Config', cell: (version) => <code>{JSON.stringify(version.config)}</code> },
              {
                header: 'Released',
                cell: (version) =>
                  version.is_released ? (
                    <When at={version.released_at} />
                  ) : mayWrite ? (
                    <>
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => release.mutate(version.version_id)}
                        aria-label={`Release version ${version.version_number}`}
                      >
                        Release
                      </button>{' '}
                      <button type="button" className="secondary" onClick={() => setEditing(version)} aria-label={`Edit version ${version.version_number}`}>
                        Edit
                      </button>
                    </>
                  ) : (
                    'draft'
                  ),
              },
            ]}
          />
        )}
      </section>
      {mayWrite && editing && (
        <VersionForm
          key={editing.version_id}
          skillId={skillId}
          draft={editing}
          onSaved={() => {
            setEditing(undefined);
            void refresh();
          }}
        />
      )}
      {mayWrite && <VersionForm skillId={skillId} onSaved={() => void refresh()} />}
    </>
  );
}
