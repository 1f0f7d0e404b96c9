import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { api, expectData, type Agent, type ApiError } from '../api';
import { ALL_FIELDS, FIELD_GROUPS, fromFormValue, toFormValue, type AgentField } from '../agent-fields';
import { ErrorMessage } from './states';

type Draft = Record<string, string | boolean>;

const draftOf = (agent: Agent): Draft => Object.fromEntries(ALL_FIELDS.map((field) => [field.key, toFormValue(field, agent[field.key])]));

/** A 422's issues by the top-level body field they name, with the path inside it (`retrieval_config.top_k: ...`). */
function issuesByField(error: ApiError | null): Record<string, string> {
  const byField: Record<string, string> = {};
  for (const issue of error?.errors ?? []) {
    const [where, field, ...inside] = issue.loc;
    if (where !== 'body' || typeof field !== 'string') continue;
    byField[field] ??= inside.length ? `${inside.join('.')}: ${issue.msg}` : issue.msg;
  }
  return byField;
}

function Control({
  field,
  value,
  onChange,
  error,
}: {
  field: AgentField;
  value: string | boolean;
  onChange: (value: string | boolean) => void;
  error?: string;
}) {
  const id = `field-${field.key}`;
  const common = { id, name: field.key, 'aria-invalid': error ? true : undefined, 'aria-describedby': error ? `${id}-error` : undefined };
  const control =
    field.kind === 'checkbox' ? (
      <input type="checkbox" {...common} checked={value as boolean} onChange={(e) => onChange(e.target.checked)} />
    ) : field.kind === 'select' ? (
      <select {...common} value={value as string} onChange={(e) => onChange(e.target.value)}>
        {field.options!.map((option) => (
          <option key={option}>{option}</option>
        ))}
      </select>
    ) : field.kind === 'textarea' || field.kind === 'json' ? (
      <textarea
        {...common}
        rows={field.kind === 'json' ? 6 : 4}
        className={field.kind === 'json' ? 'code' : undefined}
        value={value as string}
        onChange={(e) => onChange(e.target.value)}
      />
    ) : (
      <input {...common} inputMode={field.kind === 'number' ? 'decimal' : undefined} value={value as string} onChange={(e) => onChange(e.target.value)} />
    );
  return (
    <div className={field.kind === 'checkbox' ? 'field checkbox' : 'field'}>
      <label htmlFor={id}>{field.label}</label>
      {control}
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error}
        </span>
      )}
    </div>
  );
}

/**
 * Every editable field of an agent, by group. Saving sends only what changed (`PATCH /agents/{id}`); JSON that does
 * not parse is caught before sending, and the host's refusals are shown beside their fields. Nothing typed is lost.
 */
export function AgentForm({ agent, readOnly }: { agent: Agent; readOnly: boolean }) {
  const [draft, setDraft] = useState<Draft>(() => draftOf(agent));
  const [local, setLocal] = useState<Record<string, string>>({});
  const queries = useQueryClient();
  const save = useMutation<Agent, ApiError, Record<string, unknown>>({
    mutationFn: (body) => expectData(api.PATCH('/agents/{agent_id}', { params: { path: { agent_id: agent.agent_id } }, body })),
    onSuccess: async (saved) => {
      setDraft(draftOf(saved));
      queries.setQueryData(['agent', agent.agent_id], saved);
      await queries.invalidateQueries({ queryKey: ['agents'] });
    },
  });
  const remote = issuesByField(save.error);
  const errors = { ...remote, ...local };

  function submit(event: FormEvent) {
    event.preventDefault();
    const body: Record<string, unknown> = {};
    const problems: Record<string, string> = {};
    for (const field of ALL_FIELDS) {
      if (draft[field.key] === toFormValue(field, agent[field.key])) continue;
      const parsed = fromFormValue(field, draft[field.key]!);
      if ('error' in parsed) problems[field.key] = parsed.error;
      else body[field.key] = parsed.value;
    }
    setLocal(problems);
    if (Object.keys(problems).length === 0 && Object.keys(body).length > 0) save.mutate(body);
  }

  const unplaced = save.error && Object.keys(remote).length === 0;
  return (
    <form onSubmit={submit} className="agent-form" aria-label="Agent settings">
      <fieldset disabled={readOnly}>
        {FIELD_GROUPS.map((group) => (
          <fieldset key={group.title} className="group">
            <legend>{group.title}</legend>
            {group.fields.map((field) => (
              <Control
                key={field.key}
                field={field}
                value={draft[field.key]!}
                error={errors[field.key]}
                onChange={(value) => setDraft((current) => ({ ...current, [field.key]: value }))}
              />
            ))}
          </fieldset>
        ))}
        {unplaced && <ErrorMessage error={save.error} action="save the agent" />}
        {Object.keys(errors).length > 0 && (
          <p role="alert" className="error">
            Some fields were not accepted; see the messages beside them.
          </p>
        )}
        {save.isSuccess && !save.isPending && <p role="status">Saved.</p>}
        {!readOnly && (
          <button type="submit" disabled={save.isPending}>
            {save.isPending ? 'Saving…' : 'Save changes'}
          </button>
        )}
      </fieldset>
    </form>
  );
}
