import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import type { paths } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { JsonField, parseJson } from '../components/json-field';
import { ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

type TestCall = paths['/mcp-servers/{mcp_server_id}/test-call']['post']['responses'][200]['content']['application/json'];
type TestCallBody = paths['/mcp-servers/{mcp_server_id}/test-call']['post']['requestBody']['content']['application/json'];

/** tools/list or tools/call against the server, as the host would make them, with the answer shown as it came. */
function TestCallConsole({ serverId }: { serverId: string }) {
  const [action, setAction] = useState<'tools/list' | 'tools/call'>('tools/list');
  const [tool, setTool] = useState('');
  const [args, setArgs] = useState('{}');
  const [argsError, setArgsError] = useState<string>();
  const call = useMutation<TestCall, ApiError, TestCallBody>({
    mutationFn: (body) => expectData(api.POST('/mcp-servers/{mcp_server_id}/test-call', { params: { path: { mcp_server_id: serverId } }, body })),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (action === 'tools/list') return call.mutate({ action });
    const parsed = parseJson(args);
    setArgsError('error' in parsed ? parsed.error : undefined);
    if ('value' in parsed) call.mutate({ action, tool_name: tool, arguments: parsed.value as Record<string, unknown> });
  };
  const result = call.data;
  return (
    <section aria-labelledby="test-call-heading">
      <h2 id="test-call-heading">Test call</h2>
      <form className="form" onSubmit={submit}>
        <label htmlFor="test-action">Action</label>
        <select id="test-action" value={action} onChange={(e) => setAction(e.target.value as typeof action)}>
          <option>tools/list</option>
          <option>tools/call</option>
        </select>
        {action === 'tools/call' && (
          <>
            <label htmlFor="test-tool">Tool</label>
            <input id="test-tool" value={tool} onChange={(e) => setTool(e.target.value)} />
            <JsonField id="test-arguments" label="Arguments (JSON)" rows={4} value={args} onChange={setArgs} error={argsError} />
          </>
        )}
        {call.error && <ErrorMessage error={call.error} action="call the server" />}
        <button type="submit" disabled={call.isPending}>
          {call.isPending ? 'Calling…' : 'Call'}
        </button>
      </form>
      {result && (
        <div role="status" aria-label="Test call result">
          <p>
            {result.action}: {result.status} in {result.latency_ms} ms{result.error_message ? `: ${result.error_message}` : ''}
          </p>
          {result.tools && (
            <DataTable
              compact
              rows={result.tools}
              rowKey={(t) => t.name}
              columns={[
                { header: 'Tool', cell: (t) => t.name },
                { header: 'Description', cell: (t) => t.description ?? '' },
              ]}
            />
          )}
          {result.result !== undefined && <pre className="code">{JSON.stringify(result.result, null, 2)}</pre>}
        </div>
      )}
    </section>
  );
}

/** One MCP server: its configuration, a health check, and the test-call console (with mcp.write). */
export function ToolServerPage() {
  const serverId = useParams().serverId!;
  const mayWrite = useCan('mcp.write');
  const queries = useQueryClient();
  const path = { params: { path: { mcp_server_id: serverId } } };
  const server = useQuery({ queryKey: ['mcp-server', serverId], queryFn: () => expectData(api.GET('/mcp-servers/{mcp_server_id}', path)) });
  const check = useMutation({
    mutationFn: () => expectData(api.POST('/mcp-servers/{mcp_server_id}/health-check', path)),
    onSuccess: () => queries.invalidateQueries({ queryKey: ['mcp-server', serverId] }),
  });
  if (server.isPending) return <Loading what="the server" />;
  if (server.isError) return <ErrorMessage error={server.error} action="read the server" />;
  const s = server.data;
  return (
    <>
      <h1>{s.name}</h1>
      <p className="muted">
        {s.transport_type} · {s.status} · last checked <When at={s.last_health_check_at} />
        {s.last_health_message ? ` · ${s.last_health_message}` : ''}
      </p>
      <pre className="code">{JSON.stringify(s.connection_config, null, 2)}</pre>
      {mayWrite && (
        <div className="toolbar">
          <button type="button" onClick={() => check.mutate()} disabled={check.isPending}>
            {check.isPending ? 'Checking…' : 'Check health'}
          </button>
          {check.data && (
            <span role="status">
              {check.data.ok ? 'Healthy' : 'Unhealthy'}: {check.data.status}
              {check.data.message ? `, ${check.data.message}` : ''} ({check.data.latency_ms} ms)
            </span>
          )}
        </div>
      )}
      {check.error && <ErrorMessage error={check.error} action="check the server" />}
      {mayWrite && <TestCallConsole serverId={serverId} />}
    </>
  );
}
