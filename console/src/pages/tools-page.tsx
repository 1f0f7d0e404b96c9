import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, expectData, type ApiError } from '../api';
import { buttonColumn, DataTable, When } from '../components/data-table';
import { JsonField, parseJson } from '../components/json-field';
import { SecretFields, secretPayload, type SecretField } from '../components/secret-fields';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

const TRANSPORTS = ['stdio', 'http_sse'] as const;

/** Registers an MCP server: its transport and connection config (JSON, checked by the transport's plugin). */
function NewServer({ credentials }: { credentials: { credential_id: string; name: string }[] }) {
  const [name, setName] = useState('');
  const [transport, setTransport] = useState<string>('stdio');
  const [config, setConfig] = useState('{\n  "command": "node",\n  "args": []\n}');
  const [credentialId, setCredentialId] = useState('');
  const [configError, setConfigError] = useState<string>();
  const queries = useQueryClient();
  const create = useMutation<unknown, ApiError, Record<string, unknown>>({
    mutationFn: (connection_config) =>
      expectData(
        api.POST('/mcp-servers', { body: { name, transport_type: transport, connection_config, ...(credentialId && { credential_id: credentialId }) } }),
      ),
    onSuccess: async () => {
      setName('');
      await queries.invalidateQueries({ queryKey: ['mcp-servers'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseJson(config);
    setConfigError('error' in parsed ? parsed.error : undefined);
    if ('value' in parsed) create.mutate(parsed.value as Record<string, unknown>);
  };
  return (
    <form className="form" onSubmit={submit} aria-label="New MCP server">
      <h2>New MCP server</h2>
      <label htmlFor="server-name">Name</label>
      <input id="server-name" value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="server-transport">Transport</label>
      <select id="server-transport" value={transport} onChange={(e) => setTransport(e.target.value)}>
        {TRANSPORTS.map((t) => (
          <option key={t}>{t}</option>
        ))}
      </select>
      <JsonField id="server-config" label="Connection (JSON)" value={config} onChange={setConfig} error={configError} />
      <label htmlFor="server-credential">Credential</label>
      <select id="server-credential" value={credentialId} onChange={(e) => setCredentialId(e.target.value)}>
        <option value="">None</option>
        {credentials.map((c) => (
          <option key={c.credential_id} value={c.credential_id}>
            {c.name}
          </option>
        ))}
      </select>
      {create.error && <ErrorMessage error={create.error} action="register the server" />}
      <button type="submit" disabled={create.isPending}>
        Register server
      </button>
    </form>
  );
}

/** A new credential: a name and its secrets, stored encrypted; the host never gives the values back. */
function NewCredential() {
  const [name, setName] = useState('');
  const [secrets, setSecrets] = useState<SecretField[]>([{ name: '', value: '' }]);
  const queries = useQueryClient();
  const create = useMutation<unknown, ApiError>({
    mutationFn: () => expectData(api.POST('/mcp-credentials', { body: { name, secret_payload: secretPayload(secrets) } })),
    onSuccess: async () => {
      setName('');
      setSecrets([{ name: '', value: '' }]);
      await queries.invalidateQueries({ queryKey: ['mcp-credentials'] });
    },
  });
  return (
    <form
      className="form"
      aria-label="New credential"
      onSubmit={(e) => {
        e.preventDefault();
        create.mutate();
      }}
    >
      <h2>New credential</h2>
      <label htmlFor="credential-name">Name</label>
      <input id="credential-name" value={name} onChange={(e) => setName(e.target.value)} />
      <SecretFields fields={secrets} onChange={setSecrets} idPrefix="credential" />
      {create.error && <ErrorMessage error={create.error} action="store the credential" />}
      <button type="submit" disabled={create.isPending}>
        Store credential
      </button>
    </form>
  );
}

/** A credential's secrets replaced at once by new ones (typed into password fields, never shown again). */
function RotateCredential({ credential, onDone }: { credential: { credential_id: string; name: string; secret_keys: string[] }; onDone: () => void }) {
  const [secrets, setSecrets] = useState<SecretField[]>(credential.secret_keys.map((name) => ({ name, value: '' })));
  const rotate = useMutation<unknown, ApiError>({
    mutationFn: () =>
      expectData(
        api.POST('/mcp-credentials/{credential_id}/rotate', {
          params: { path: { credential_id: credential.credential_id } },
          body: { secret_payload: secretPayload(secrets) },
        }),
      ),
    onSuccess: onDone,
  });
  return (
    <form
      className="form"
      onSubmit={(e) => {
        e.preventDefault();
        rotate.mutate();
      }}
      aria-label={`Rotate ${credential.name}`}
    >
      <h3>Rotate {credential.name}</h3>
      <SecretFields fields={secrets} onChange={setSecrets} idPrefix={`rotate-${credential.credential_id}`} />
      {rotate.error && <ErrorMessage error={rotate.error} action="rotate the credential" />}
      <button type="submit" disabled={rotate.isPending}>
        Rotate
      </button>
    </form>
  );
}

/** MCP servers with their health, and the credentials their configs refer to (names and secret names only). */
export function ToolsPage() {
  const mayWrite = useCan('mcp.write');
  const servers = useQuery({ queryKey: ['mcp-servers'], queryFn: () => expectData(api.GET('/mcp-servers', { params: { query: { limit: 100 } } })) });
  const credentials = useQuery({
    queryKey: ['mcp-credentials'],
    queryFn: () => expectData(api.GET('/mcp-credentials', { params: { query: { limit: 100 } } })),
  });
  const queries = useQueryClient();
  const [rotating, setRotating] = useState<string>();
  const rotated = credentials.data?.items.find((c) => c.credential_id === rotating);
  return (
    <>
      <h1>Tools</h1>
      <section aria-labelledby="servers-heading">
        <h2 id="servers-heading">MCP servers</h2>
        {servers.isPending && <Loading what="servers" />}
        {servers.isError && <ErrorMessage error={servers.error} action="list the servers" />}
        {servers.data && servers.data.items.length === 0 && <Empty>No MCP server registered yet.</Empty>}
        {servers.data && servers.data.items.length > 0 && (
          <DataTable
            rows={servers.data.items}
            rowKey={(s) => s.mcp_server_id}
            columns={[
              { header: 'Name', cell: (s) => <Link to={`/tools/${s.mcp_server_id}`}>{s.name}</Link> },
              { header: 'Transport', cell: (s) => s.transport_type },
              { header: 'Status', cell: (s) => s.status },
              { header: 'Last check', cell: (s) => <When at={s.last_health_check_at} /> },
              { header: 'Message', cell: (s) => s.last_health_message ?? '' },
            ]}
          />
        )}
      </section>
      <section aria-labelledby="credentials-heading">
        <h2 id="credentials-heading">Credentials</h2>
        {credentials.isError && <ErrorMessage error={credentials.error} action="list the credentials" />}
        {credentials.data && credentials.data.items.length === 0 && <p className="muted">No credential stored.</p>}
        {credentials.data && credentials.data.items.length > 0 && (
          <DataTable
            compact
            rows={credentials.data.items}
            rowKey={(c) => c.credential_id}
            columns={[
              { header: 'Name', cell: (c) => c.name },
              { header: 'Scope', cell: (c) => c.scope },
              { header: 'Secrets', cell: (c) => c.secret_keys.join(', ') },
              { header: 'Rotated', cell: (c) => <When at={c.rotated_at} /> },
              ...buttonColumn<(typeof credentials.data.items)[number]>(
                mayWrite,
                'Rotate',
                (c) => `Rotate ${c.name}`,
                (c) => setRotating(c.credential_id),
              ),
            ]}
          />
        )}
        {rotated && (
          <RotateCredential
            key={rotated.credential_id}
            credential={rotated}
            onDone={() => {
              setRotating(undefined);
              void queries.invalidateQueries({ queryKey: ['mcp-credentials'] });
            }}
          />
        )}
      </section>
      {mayWrite && (
        <div className="two-forms">
          <NewServer credentials={credentials.data?.items ?? []} />
          <NewCredential />
        </div>
      )}
    </>
  );
}
