import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { useChallenge } from '../challenge';
import { DataTable, When } from '../components/data-table';
import { parseJson } from '../components/json-field';
import { ErrorMessage, ListStates } from '../components/states';
import { useCan } from '../session';

type Setting = components['schemas']['SystemSetting'];

const shown = (value: unknown) => JSON.stringify(value);

/** One setting's new value, typed as JSON (a number, true, a quoted string), sent with a challenge. */
function EditSetting({ setting, onDone }: { setting: Setting; onDone: () => void }) {
  const [text, setText] = useState(shown(setting.value));
  const [invalid, setInvalid] = useState<string>();
  const challenge = useChallenge();
  const save = useMutation<Setting, ApiError, unknown>({
    mutationFn: async (value) =>
      expectData(
        api.PATCH('/admin/system-settings/{config_key}', { params: { path: { config_key: setting.config_key }, header: await challenge() }, body: { value } }),
      ),
    onSuccess: onDone,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseJson(text);
    setInvalid('error' in parsed ? parsed.error : undefined);
    if ('value' in parsed) save.mutate(parsed.value);
  };
  return (
    <form className="toolbar" onSubmit={submit} aria-label={`Change ${setting.config_key}`}>
      <label htmlFor={`setting-${setting.config_key}`}>New value (JSON)</label>
      <input id={`setting-${setting.config_key}`} value={text} onChange={(e) => setText(e.target.value)} />
      <button type="submit" disabled={save.isPending}>
        Save
      </button>
      {invalid && <span className="field-error">{invalid}</span>}
      {save.error && <ErrorMessage error={save.error} action={`change ${setting.config_key}`} />}
    </form>
  );
}

/**
 * The settings the host keeps in its database: each with its effective value, the configuration's value and where the
 * effective one comes from; a change (with the password asked again) takes effect without a restart.
 */
export function SystemSettingsPage() {
  const mayWrite = useCan('system_settings.write');
  const queries = useQueryClient();
  const [editing, setEditing] = useState<string>();
  const settings = useQuery({ queryKey: ['system-settings'], queryFn: () => expectData(api.GET('/admin/system-settings')) });
  const done = () => {
    setEditing(undefined);
    void queries.invalidateQueries({ queryKey: ['system-settings'] });
  };
  return (
    <>
      <h1>System settings</h1>
      <ListStates query={settings} count={settings.data?.items.length} what="settings" empty="This host keeps no setting in its database." />
      {settings.data && settings.data.items.length > 0 && (
        <DataTable
          rows={settings.data.items}
          rowKey={(setting) => setting.config_key}
          columns={[
            { header: 'Setting', cell: (setting) => <code>{setting.config_key}</code> },
            { header: 'What it does', cell: (setting) => setting.description },
            { header: 'Value', cell: (setting) => <code>{shown(setting.value)}</code> },
            { header: 'From', cell: (setting) => (setting.source === 'database' ? 'changed here' : 'configuration') },
            { header: 'Configured', cell: (setting) => <code>{shown(setting.default_value)}</code> },
            { header: 'Changed', cell: (setting) => <When at={setting.updated_at} /> },
            ...(mayWrite
              ? [
                  {
                    header: 'Change',
                    cell: (setting: Setting) =>
                      editing === setting.config_key ? (
                        <EditSetting setting={setting} onDone={done} />
                      ) : (
                        <button type="button" className="secondary" onClick={() => setEditing(setting.config_key)} aria-label={`Change ${setting.config_key}`}>
                          Change
                        </button>
                      ),
                  },
                ]
              : []),
          ]}
        />
      )}
    </>
  );
}
