// Issue 16 item 2: URLs that arrive through the API (MCP server URLs, URL tools) reach only public addresses, each
// redirect checked again, answers capped. Each attack of the issue is a test: the host's own /healthz, the embedded
// Chroma through a 302, IPv4-mapped and hexadecimal loopback forms, cloud metadata, a name resolving to loopback.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';

/** A plain HTTP server on loopback answering every request with `handler`. */
async function serve(t: { teardown(fn: () => unknown): void }, handler: http.RequestListener): Promise<number> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return (server.address() as AddressInfo).port;
}

t.test('URL tools and MCP servers registered through the API cannot reach private addresses', async (t) => {
  // `localhost` is allowed by name (an internal service an operator listed); its address 127.0.0.1 is not.
  const host = await startTestHost(t, { env: { AGENT_HOST_HTTP_ALLOWED_PRIVATE_HOSTS: 'localhost', AGENT_HOST__HTTP__MAX_RESPONSE_BYTES: '2000' } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const chroma = new URL(process.env.TEST_CHROMA_URL!);
  const redirector = await serve(t, (req, res) => {
    if (req.url?.startsWith('/big')) return void res.end('x'.repeat(10_000));
    if (req.url?.startsWith('/ok')) return void res.end('{"fine":true}');
    // Not chained: restify, loaded in this process, patches writeHead to return nothing.
    res.writeHead(302, { location: `http://127.0.0.1:${chroma.port}/api/v2/heartbeat` });
    res.end();
  });
  const call = async (url: string) => {
    const server = (
      await admin.request('POST', '/mcp-servers', {
        name: `tool ${Math.random()}`,
        transport_type: 'http_sse',
        connection_config: { url, import_mode: 'url', tool_name: 'fetch_it' },
      })
    ).body;
    const answer = await admin.request('POST', `/mcp-servers/${server.mcp_server_id}/test-call`, {
      action: 'tools/call',
      tool_name: 'fetch_it',
      arguments: {},
    });
    return JSON.stringify(answer.body);
  };

  t.match(await call(`http://localhost:${redirector}/ok`), '"fine":true', 'an allowed host is reached');
  const viaRedirect = await call(`http://localhost:${redirector}/hop`);
  t.match(viaRedirect, /127\.0\.0\.1, a loopback address/, 'a 302 from an allowed host to the embedded Chroma is refused at the hop');
  t.notMatch(viaRedirect, 'nanosecond heartbeat', "and Chroma's answer does not come back");
  t.match(await call(`${host.url}/healthz`), /127\.0\.0\.1, a loopback address/, "the host's own /healthz is refused");
  t.match(await call(`http://[::ffff:127.0.0.1]:${chroma.port}/api/v2/heartbeat`), /a loopback address/, 'an IPv4-mapped IPv6 loopback is refused');
  t.match(await call(`http://0x7f000001:${chroma.port}/api/v2/heartbeat`), /a loopback address/, 'a hexadecimal loopback is refused');
  t.match(await call('http://169.254.169.254/latest/meta-data/'), /169\.254\.169\.254, a linkLocal address/, 'cloud metadata is refused');
  t.match(await call('http://10.0.0.7/'), /a private address/, 'a private range is refused');
  t.match(
    await call(`http://localhost:${redirector}/big`),
    /passed 2000 bytes \(\[http\] max_response_bytes\)/,
    'an answer over the cap is cut off with a clear error',
  );

  const mcp = (
    await admin.request('POST', '/mcp-servers', {
      name: 'Internal MCP',
      transport_type: 'http_sse',
      connection_config: { url: `http://127.0.0.1:${chroma.port}/mcp` },
    })
  ).body;
  const health = await admin.request('POST', `/mcp-servers/${mcp.mcp_server_id}/health-check`);
  t.match(health.body, { ok: false, message: /a loopback address/ }, 'an MCP server URL goes through the same guard');
});

t.test('a name that resolves to loopback is refused unless listed', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const port = await serve(t, (_req, res) => res.end('internal'));
  const server = (
    await admin.request('POST', '/mcp-servers', {
      name: 'Named',
      transport_type: 'http_sse',
      connection_config: { url: `http://localhost:${port}/`, import_mode: 'url', tool_name: 'fetch_it' },
    })
  ).body;
  const answer = await admin.request('POST', `/mcp-servers/${server.mcp_server_id}/test-call`, { action: 'tools/call', tool_name: 'fetch_it', arguments: {} });
  t.match(JSON.stringify(answer.body), /localhost resolves to (127\.0\.0\.1|::1), a loopback address/, 'the address the name resolves to is what is checked');
  t.notMatch(JSON.stringify(answer.body), 'internal');
});
