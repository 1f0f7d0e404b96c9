import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { paths } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from './data-table';
import { ErrorMessage, ListStates } from './states';

type CreatedKey = paths['/agents/{agent_id}/public-api-keys']['post']['responses'][201]['content']['application/json'];

/**
 * A Fusion agent's public API keys: made with a label and an optional end, the key itself shown once (only its hash
 * is kept), and revoked one by one. The list never holds a key, only its prefix.
 */
export function PublicApiKeys({ agentId, mayWrite }: { agentId: string; mayWrite: boolean }) {
  const queries = useQueryClient();
  const [label, setLabel] = useState('');
  const [expires, setExpires] = useState('');
  const path = { params: { path: { agent_id: agentId } } };
  const keys = useQuery({ queryKey: ['public-api-keys', agentId], queryFn: () => expectData(api.GET('/agents/{agent_id}/public-api-keys', path)) });
  const refresh = () => queries.invalidateQueries({ queryKey: ['public-api-keys', agentId] });
  const create = useMutation<CreatedKey, ApiError>({
    mutationFn: () =>
      expectData(api.POST('/agents/{agent_id}/public-api-keys', { ...path, body: { label, ...(expires && { expires_at: new Date(expires).toISOString() }) } })),
    onSuccess: async () => {
      setLabel('');
      setExpires('');
      await refresh();
    },
  });
  const revoke = useMutation<unknown, ApiError, string>({
    mutationFn: (keyId) =>
      expectData(api.POST('/agents/{agent_id}/public-api-keys/{key_id}/revoke', { params: { path: { agent_id: agentId, key_id: keyId } } })),
    onSuccess: refresh,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <section aria-labelledby="api-keys-heading">
      <h2 id="api-keys-heading">Public API keys</h2>
      <ListStates query={keys} count={keys.data?.items.length} what="API keys" empty="No API key yet." />
      {revoke.error && <ErrorMessage error={revoke.error} action="revoke the key" />}
      {keys.data && keys.data.items.length > 0 && (
        <DataTable
          compact
          rows={keys.data.items}
          rowKey={(key) => key.key_id}
          columns={[
            { header: 'Label', cell: (key) => key.label },
            { header: 'Starts with', cell: (key) => <code>{key.prefix}</code> },
            { header: 'Expires', cell: (key) => <When at={key.expires_at} /> },
            { header: 'Last used', cell: (key) => <When at={key.last_used_at} /> },
            {
              header: 'State',
              cell: (key) =>
                key.revoked ? (
                  'revoked'
                ) : (
                  <>
                    active{' '}
                    {mayWrite && (
                      <button type="button" className="secondary" onClick={() => revoke.mutate(key.key_id)} aria-label={`Revoke ${key.label}`}>
                        Revoke
                      </button>
                    )}
                  </>
                ),
            },
          ]}
        />
      )}
      {mayWrite && (
        <form className="form" onSubmit={submit} aria-label="New API key">
          <label htmlFor="key-label">Label</label>
          <input id="key-label" value={label} onChange={(e) => setLabel(e.target.value)} />
          <label htmlFor="key-expires">Expires (optional)</label>
          <input id="key-expires" type="datetime-local" value={expires} onChange={(e) => setExpires(e.target.value)} />
          {create.error && <ErrorMessage error={create.error} action="make the key" />}
          <button type="submit" disabled={create.isPending}>
            Make key
          </button>
        </form>
      )}
      {create.data && (
        <div role="status" className="guard-warning">
          Copy the key for {create.data.label} now; it is not shown again: <code>{create.data.api_key}</code>
        </div>
      )}
    </section>
  );
}
