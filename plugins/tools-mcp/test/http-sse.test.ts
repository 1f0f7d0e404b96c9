// tools-mcp over `http_sse` against the tracking fixture served by the MCP
// SDK over Streamable HTTP and over the older SSE transport, and a plain HTTP
// endpoint imported as one tool (`import_mode=url`). The fixture records every
// request's headers, so credential placeholders are checked where they land.
import t from 'tap';
import { BadRequestError, UpstreamError, UpstreamTimeoutError } from '@agent-host/sdk';
import { startMcpHttpFixture, type McpHttpFixture } from '../../../test/fixtures/mcp/http-server.js';
import { trackingResult } from '../../../test/fixtures/mcp/tracking-server.js';
import { backendFor, capturingLogger, server } from '../../../test/fixtures/mcp/clients.js';

const opts = { timeoutMs: 10_000 };
const SECRET = { ACCESS_TOKEN: 'http-secret-7' };

async function fixture(t: { teardown(fn: () => Promise<void>): void }): Promise<McpHttpFixture> {
  const started = await startMcpHttpFixture();
  t.teardown(() => started.close());
  return started;
}

const seen = (f: McpHttpFixture) => f.requests.map((r) => `${r.method} ${r.path}`);

/** Whether `check` holds within two seconds (a notification is sent without waiting for it to arrive). */
async function eventually(check: () => boolean): Promise<boolean> {
  for (const until = Date.now() + 2_000; !check(); await new Promise((resolve) => setTimeout(resolve, 20))) {
    if (Date.now() > until) return false;
  }
  return true;
}

for (const [wire, path] of [
  ['streamable_http', '/mcp'],
  ['sse', '/sse'],
] as const) {
  t.test(`${wire}: tools/list, tools/call and health/check on one reused session`, async (t) => {
    const f = await fixture(t);
    const backend = await backendFor(t, 'http_sse');
    const target = server('http_sse', { url: `${f.url}${path}` });
    t.match(await backend.healthCheck(target, opts), { ok: true, message: `tracking-fixture 1.0.0 answered over ${wire}` }, `detected as ${wire}`);
    const tools = await backend.listTools(target, opts);
    t.same(
      tools.map((tool) => tool.name),
      ['query_tracking', 'slow', 'whoami', 'crash', 'fail', 'flood'],
      'tools/list returns every tool the server offers',
    );
    t.same(
      await backend.callTool(target, 'query_tracking', { selectNo: 'BL-778899' }, opts),
      { status: 'success', result: trackingResult('BL-778899') },
      'the tracking result comes back whole',
    );
    t.match(
      await backend.callTool(target, 'fail', {}, opts),
      { status: 'error', error: 'tracking backend unavailable' },
      'a tool error (isError) is an error outcome',
    );
    t.same(f.sessions, { streamable_http: wire === 'streamable_http' ? 1 : 0, sse: wire === 'sse' ? 1 : 0 }, 'every action used one MCP session');
  });

  t.test(`${wire}: a call past its timeout is a timeout outcome; the server is told to cancel and the session stays`, async (t) => {
    const f = await fixture(t);
    const backend = await backendFor(t, 'http_sse');
    const target = server('http_sse', { url: `${f.url}${path}` });
    await backend.healthCheck(target, opts);
    const started = Date.now();
    t.same(
      await backend.callTool(target, 'slow', { ms: 10_000 }, { timeoutMs: 300 }),
      { status: 'timeout', result: null, error: 'tools/call slow timed out after 300 ms' },
      'the outcome is timeout',
    );
    t.ok(Date.now() - started < 2_000, 'the outcome comes at the timeout');
    t.equal((await backend.callTool(target, 'query_tracking', { selectNo: 'X' }, opts)).status, 'success', 'the next call works');
    t.ok(
      await eventually(() => f.requests.some((r) => (r.body as { method?: string })?.method === 'notifications/cancelled')),
      'the server was told to cancel the request',
    );
    t.equal(f.sessions.streamable_http + f.sessions.sse, 1, 'on the same session');
  });

  t.test(`${wire}: header placeholders are replaced before any request leaves`, async (t) => {
    const f = await fixture(t);
    const backend = await backendFor(t, 'http_sse');
    const headers = { Authorization: 'Bearer <ACCESS_TOKEN>', 'X-Tenant': 'acme' };
    await backend.callTool(server('http_sse', { url: `${f.url}${path}`, headers }, SECRET), 'whoami', {}, opts);
    t.ok(f.requests.length >= 2, 'requests were sent');
    t.same([...new Set(f.requests.map((r) => r.headers.authorization))], ['Bearer http-secret-7'], 'every request carried the substituted header');
    t.same([...new Set(f.requests.map((r) => r.headers['x-tenant']))], ['acme'], 'plain headers are sent as they are');
  });
}

t.test('a call its caller aborts is an error outcome, and the connection stays in use', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  const target = server('http_sse', { url: `${f.url}/mcp` });
  await backend.healthCheck(target, opts);
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  t.same(
    await backend.callTool(target, 'slow', { ms: 10_000 }, { timeoutMs: 10_000, signal: controller.signal }),
    {
      status: 'error',
      result: null,
      error: 'tools/call slow was cancelled by the caller',
    },
    "the caller's abort is an error outcome, not a timeout",
  );
  t.equal((await backend.callTool(target, 'query_tracking', { selectNo: 'X' }, opts)).status, 'success', 'the next call works');
  t.equal(f.sessions.streamable_http, 1, 'the session was kept: a cancellation says nothing against the server');
});

t.test('auto detection: Streamable HTTP first, the SSE transport after a 4xx, as MCP prescribes', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  await backend.listTools(server('http_sse', { url: `${f.url}/mcp` }, null, 'new'), opts);
  t.notOk(
    seen(f).some((r) => r.includes('/sse')),
    'a Streamable HTTP server is never tried over SSE',
  );
  f.requests.length = 0;
  await backend.listTools(server('http_sse', { url: `${f.url}/sse` }, null, 'old'), opts);
  t.same(seen(f).slice(0, 2), ['POST /sse', 'GET /sse'], 'an SSE-only server: the POST was refused (405), then the SSE stream opened');
});

t.test('http_transport chooses the wire instead of detecting it', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  t.match(
    await backend.healthCheck(server('http_sse', { url: `${f.url}/sse`, http_transport: 'sse' }), opts),
    { ok: true, message: /over sse$/ },
    'the SSE transport is used without detection',
  );
  t.same(seen(f)[0], 'GET /sse', 'sse goes straight to the SSE stream, no probe');
  f.requests.length = 0;
  const forced = await backend.healthCheck(server('http_sse', { url: `${f.url}/sse`, http_transport: 'streamable_http' }, null, 'forced'), opts);
  t.match(forced, { ok: false, message: /^health\/check failed: HTTP 405: / }, 'streamable_http does not fall back; the status is named');
  t.same(seen(f), ['POST /sse'], 'only the Streamable HTTP POST was tried');
});

t.test('a placeholder the credential lacks fails before any request', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  const target = server('http_sse', { url: `${f.url}/mcp`, headers: { Authorization: 'Bearer <ACCESS_TOKEN>' } });
  t.same(
    await backend.callTool(target, 'whoami', {}, opts),
    {
      status: 'error',
      result: null,
      error: 'tools/call whoami failed: headers.Authorization references <ACCESS_TOKEN>, but the server has no credential',
    },
    'the error names the placeholder',
  );
  await t.rejects(backend.listTools(target, opts), BadRequestError, 'tools/list refuses with 400');
  t.same(f.requests, [], 'nothing was sent');
});

t.test('credentials a server echoes back in an error are masked', async (t) => {
  const f = await fixture(t);
  const log = capturingLogger();
  const backend = await backendFor(t, 'http_sse', { log });
  const target = server('http_sse', { url: `${f.url}/reject`, headers: { Authorization: 'Bearer <ACCESS_TOKEN>' } }, SECRET);
  const outcome = await backend.callTool(target, 'whoami', {}, opts);
  t.equal(outcome.status, 'error', 'a 401 is an error outcome');
  t.match(outcome.error, 'rejected credentials: Bearer ***', 'the server said 401 and echoed the header');
  const health = await backend.healthCheck(target, opts);
  const listed = await backend.listTools(target, opts).catch((e: Error) => e);
  t.type(listed, UpstreamError, 'tools/list rejects with UpstreamError');
  t.notMatch(
    [outcome.error, health.message, (listed as Error).message, ...log.lines].join('\n'),
    SECRET.ACCESS_TOKEN,
    'the secret is in no outcome, exception or log line',
  );
});

for (const [wire, path] of [
  ['streamable_http', '/mcp'],
  ['sse', '/sse'],
] as const) {
  t.test(`${wire}: a server that floods past [http] max_response_bytes fails the call at once, naming the limit; the next call works`, async (t) => {
    const f = await fixture(t);
    // backendFor's HTTP client reads at most 1 MB of an answer.
    const backend = await backendFor(t, 'http_sse');
    const target = server('http_sse', { url: `${f.url}${path}` });
    const started = Date.now();
    const over = await backend.callTool(target, 'flood', { bytes: 32 * 1024 * 1024 }, opts);
    t.equal(over.status, 'error', 'a 32 MB answer is an error outcome');
    t.ok(Date.now() - started < opts.timeoutMs / 2, 'when the limit is passed, not at the timeout');
    t.match(over.error, /passed 1048576 bytes \(\[http\] max_response_bytes\)/, 'the error names the limit');
    t.equal((await backend.callTool(target, 'flood', { bytes: 1024 }, opts)).status, 'success', 'the next call is answered');
  });
}

t.test('an unreachable server is an error, and tools/list maps a timeout to 504', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  t.match(
    await backend.healthCheck(server('http_sse', { url: 'http://127.0.0.1:1/mcp' }), opts),
    { ok: false, message: /^health\/check failed: fetch failed \(.+\)$/ },
    'the reason fetch gives is named',
  );
  t.match(
    await backend.callTool(server('http_sse', { url: 'http://127.0.0.1:1/track', import_mode: 'url' }), 'imported_http_tool', {}, opts),
    { status: 'error', error: /fetch failed \(.+\)/ },
    'an unreachable plain URL is an error outcome naming why',
  );
  const slowList = await backend
    .listTools(server('http_sse', { url: `${f.url}/slow`, import_mode: 'mcp' }, null, 'slow'), { timeoutMs: 300 })
    .catch((e: Error) => e);
  t.type(slowList, UpstreamTimeoutError, 'a server that does not answer in time');
  t.match((slowList as Error).message, 'tools/list timed out after 300 ms', 'its message names the timeout');
});

t.test('import_mode=url: one tool, named imported_http_tool unless tool_name says otherwise', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  const tools = await backend.listTools(server('http_sse', { url: `${f.url}/track?key=abc`, import_mode: 'url' }), opts);
  t.same(
    tools,
    [
      {
        name: 'imported_http_tool',
        description: `Sends its arguments as query parameters of GET ${f.url}/track and returns the response.`,
        input_schema: { type: 'object', additionalProperties: true },
      },
    ],
    'the description names the endpoint without its query',
  );
  const named = await backend.listTools(
    server('http_sse', { url: `${f.url}/track`, import_mode: 'url', http_method: 'POST', tool_name: 'query_tracking' }),
    opts,
  );
  t.match(named, [{ name: 'query_tracking', description: /JSON body of POST/ }], 'tool_name names the tool and POST is described');
  t.same(f.requests, [], 'listing the one tool needs no request');
});

t.test('import_mode=url with GET: arguments go in the query, headers carry the credential', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  const target = server('http_sse', { url: `${f.url}/track?source=host`, import_mode: 'url', headers: { Authorization: 'Bearer <ACCESS_TOKEN>' } }, SECRET);
  const outcome = await backend.callTool(target, 'imported_http_tool', { selectNo: 'MSKU1', round: 2, filter: { mode: 'latest' } }, opts);
  t.same(outcome, { status: 'success', result: trackingResult('MSKU1') }, 'the JSON answer is the result');
  t.match(f.requests, [{ method: 'GET', path: '/track', headers: { authorization: 'Bearer http-secret-7' } }], 'one GET with the substituted header');
  t.same(
    f.requests[0]!.query,
    { source: 'host', selectNo: 'MSKU1', round: '2', filter: '{"mode":"latest"}' },
    'strings as they are, other values as JSON, the URL query kept',
  );
});

t.test('import_mode=url with POST: arguments are the JSON body', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  const target = server('http_sse', { url: `${f.url}/track`, import_mode: 'url', http_method: 'POST', tool_name: 'query_tracking' });
  const args = { selectNo: 'BKG-42', query: 'track BKG-42', round: 1 };
  t.same(
    await backend.callTool(target, 'query_tracking', args, opts),
    { status: 'success', result: trackingResult('BKG-42') },
    'the JSON answer is the result',
  );
  t.match(f.requests, [{ method: 'POST', path: '/track', headers: { 'content-type': 'application/json' } }], 'one POST with a JSON content type');
  t.same(f.requests[0]!.body, args, 'the body is the arguments');
  t.match(
    await backend.callTool(target, 'imported_http_tool', args, opts),
    { status: 'error', error: /unknown tool "imported_http_tool"; this server offers only "query_tracking"/ },
    'a tool name other than tool_name is an error outcome',
  );
});

t.test('import_mode=url: an HTTP error is an error outcome with the body, a slow endpoint a timeout', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  const failing = server('http_sse', { url: `${f.url}/track-error`, import_mode: 'url' });
  t.same(
    await backend.callTool(failing, 'imported_http_tool', {}, opts),
    { status: 'error', result: { error: 'tracking backend unavailable' }, error: 'HTTP 503' },
    'a non-2xx answer is an error outcome carrying the body',
  );
  const slow = server('http_sse', { url: `${f.url}/slow`, import_mode: 'url' });
  t.same(
    await backend.callTool(slow, 'imported_http_tool', {}, { timeoutMs: 300 }),
    { status: 'timeout', result: null, error: 'tools/call imported_http_tool timed out after 300 ms' },
    'a URL that answers too late is a timeout outcome',
  );
});

t.test('import_mode=url: health/check is a HEAD request', async (t) => {
  const f = await fixture(t);
  const backend = await backendFor(t, 'http_sse');
  t.same(
    await backend.healthCheck(server('http_sse', { url: `${f.url}/track?key=abc`, import_mode: 'url' }), opts),
    { ok: true, message: `HEAD ${f.url}/track answered HTTP 200` },
    'a 2xx answer to HEAD is healthy, and the message names the endpoint without its query',
  );
  t.match(
    await backend.healthCheck(server('http_sse', { url: `${f.url}/track-error`, import_mode: 'url' }), opts),
    { ok: false, message: /HTTP 503/ },
    'a 5xx is unhealthy',
  );
  t.same(seen(f), ['HEAD /track', 'HEAD /track-error'], 'no GET or POST with side effects');
});
