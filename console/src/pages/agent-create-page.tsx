import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import type { paths } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { ErrorMessage } from '../components/states';

type AgentCreate = paths['/agents']['post']['requestBody']['content']['application/json'];

const AGENT_TYPES = ['chat', 'etl', 'document_extraction', 'fusion'] as const;
const ACCESS_MODES = ['admin_only', 'public_anonymous', 'public_api_key'] as const;

interface Draft {
  name: string;
  description: string;
  agent_type: (typeof AGENT_TYPES)[number];
  public_access_mode: (typeof ACCESS_MODES)[number];
  system_prompt: string;
  model_provider: string;
  model_name: string;
}

const EMPTY: Draft = { name: '', description: '', agent_type: 'chat', public_access_mode: 'admin_only', system_prompt: '', model_provider: '', model_name: '' };

/** The request body: empty optional fields are left out, so the host applies its own defaults. */
function toBody(draft: Draft): AgentCreate {
  return {
    name: draft.name,
    agent_type: draft.agent_type,
    public_access_mode: draft.public_access_mode,
    ...(draft.description && { description: draft.description }),
    ...(draft.system_prompt && { system_prompt: draft.system_prompt }),
    ...(draft.model_provider && { model_provider: draft.model_provider }),
    ...(draft.model_name && { model_name: draft.model_name }),
  };
}

/** A 422's issues by the body field they name (`loc` is `["body", field, ...]`). */
function issuesByField(error: ApiError | null): Record<string, string> {
  const byField: Record<string, string> = {};
  for (const issue of error?.errors ?? []) {
    const field = issue.loc[0] === 'body' ? issue.loc[1] : undefined;
    if (typeof field === 'string') byField[field] ??= issue.msg;
  }
  return byField;
}

/** Creates an agent from its main fields; what the host refuses is shown beside the field, and nothing typed is lost. */
export function AgentCreatePage() {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const navigate = useNavigate();
  const queries = useQueryClient();
  const create = useMutation<unknown, ApiError, AgentCreate>({
    mutationFn: (body) => expectData(api.POST('/agents', { body })),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ['agents'] });
      await navigate('/agents');
    },
  });
  const fieldErrors = issuesByField(create.error);
  const unplaced = create.error && Object.keys(fieldErrors).length === 0;

  const set =
    <K extends keyof Draft>(field: K) =>
    (value: Draft[K]) =>
      setDraft((current) => ({ ...current, [field]: value }));
  const fieldProps = (field: keyof Draft) => ({
    name: field,
    id: `agent-${field}`,
    'aria-invalid': fieldErrors[field] ? true : undefined,
    'aria-describedby': fieldErrors[field] ? `agent-${field}-error` : undefined,
  });
  const fieldError = (field: keyof Draft) =>
    fieldErrors[field] && (
      <span id={`agent-${field}-error`} className="field-error">
        {fieldErrors[field]}
      </span>
    );

  function submit(event: FormEvent) {
    event.preventDefault();
    create.mutate(toBody(draft));
  }

  return (
    <>
      <h1>New agent</h1>
      <form onSubmit={submit} className="form" noValidate>
        <label htmlFor="agent-name">Name</label>
        <input {...fieldProps('name')} value={draft.name} onChange={(e) => set('name')(e.target.value)} />
        {fieldError('name')}
        <label htmlFor="agent-description">Description</label>
        <textarea {...fieldProps('description')} value={draft.description} onChange={(e) => set('description')(e.target.value)} />
        {fieldError('description')}
        <label htmlFor="agent-agent_type">Type</label>
        <select {...fieldProps('agent_type')} value={draft.agent_type} onChange={(e) => set('agent_type')(e.target.value as Draft['agent_type'])}>
          {AGENT_TYPES.map((type) => (
            <option key={type}>{type}</option>
          ))}
        </select>
        {fieldError('agent_type')}
        <label htmlFor="agent-public_access_mode">Access</label>
        <select
          {...fieldProps('public_access_mode')}
          value={draft.public_access_mode}
          onChange={(e) => set('public_access_mode')(e.target.value as Draft['public_access_mode'])}
        >
          {ACCESS_MODES.map((mode) => (
            <option key={mode}>{mode}</option>
          ))}
        </select>
        {fieldError('public_access_mode')}
        <label htmlFor="agent-system_prompt">System prompt</label>
        <textarea {...fieldProps('system_prompt')} rows={5} value={draft.system_prompt} onChange={(e) => set('system_prompt')(e.target.value)} />
        {fieldError('system_prompt')}
        <label htmlFor="agent-model_provider">Model provider</label>
        <input {...fieldProps('model_provider')} value={draft.model_provider} onChange={(e) => set('model_provider')(e.target.value)} />
        {fieldError('model_provider')}
        <label htmlFor="agent-model_name">Model name</label>
        <input {...fieldProps('model_name')} value={draft.model_name} onChange={(e) => set('model_name')(e.target.value)} />
        {fieldError('model_name')}
        {unplaced && <ErrorMessage error={create.error} action="create the agent" />}
        {create.error && !unplaced && (
          <p role="alert" className="error">
            The host refused some fields; see the messages beside them.
          </p>
        )}
        <button type="submit" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create agent'}
        </button>
      </form>
    </>
  );
}
