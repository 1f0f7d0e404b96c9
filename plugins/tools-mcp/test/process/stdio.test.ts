// tools-mcp over stdio against real MCP servers in child processes: the
// official server-everything and the tracking fixture (test/fixtures/mcp).
// Every child is checked to be gone (exited and reaped) when its use ends.
import t from 'tap';
import { ValidationError } from '@agent-host/sdk';
import { trackingResult } from '../../../../test/fixtures/mcp/tracking-server.js';
import {
  backendFor,
  capturingLogger,
  everythingStdio,
  goneWithin,
  processExists,
  server,
  trackingStdio,
  whoami,
} from '../../../../test/fixtures/mcp/clients.js';

const opts = { timeoutMs: 15_000 };

t.test('server-everything over stdio: tools/list and tools/call', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const everything = server('stdio', everythingStdio());
  const health = await backend.healthCheck(everything, opts);
  t.match(health, { ok: true, message: /answered over stdio/ }, 'health/check initialises and pings the server');

  const tools = await backend.listTools(everything, opts);
  const echo = tools.find((tool) => tool.name === 'echo');
  t.ok(echo, 'the listed tools include echo');
  t.match(echo, { description: String, input_schema: { type: 'object', properties: { message: { type: 'string' } } } }, 'inputSchema is given as input_schema');

  t.same(
    await backend.callTool(everything, 'echo', { message: 'hello' }, opts),
    { status: 'success', result: 'Echo: hello' },
    'a text result is returned as its text',
  );
  const sum = await backend.callTool(everything, 'get-sum', { a: 2, b: 3 }, opts);
  t.equal(sum.status, 'success', 'a tool with numeric arguments succeeds');
  t.match(sum.result, /5/, 'get-sum adds');
  const invalid = await backend.callTool(everything, 'get-sum', { a: 'two' }, opts);
  t.equal(invalid.status, 'error', 'arguments the server refuses make an error outcome');
});

t.test('args given as one string start the same server', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const { command, args } = everythingStdio();
  const outcome = await backend.callTool(server('stdio', { command, args: args.map((a) => JSON.stringify(a)).join(' ') }), 'echo', { message: 'x' }, opts);
  t.same(outcome, { status: 'success', result: 'Echo: x' }, 'the string was split into the same argv');
});

t.test('env placeholders take credential values, and the host environment stays out of the child', async (t) => {
  const backend = await backendFor(t, 'stdio');
  process.env.AGENT_HOST_TEST_HOST_ONLY = 'host-only-value';
  t.teardown(() => void delete process.env.AGENT_HOST_TEST_HOST_ONLY);
  const target = server('stdio', { ...everythingStdio(), env: { API_TOKEN: 'Bearer <ACCESS_TOKEN>', REGION: 'eu' } }, { ACCESS_TOKEN: 'stdio-secret-1' });
  const outcome = await backend.callTool(target, 'get-env', {}, opts);
  t.equal(outcome.status, 'success', 'get-env answers');
  const env = outcome.result as Record<string, string>;
  t.equal(env.API_TOKEN, 'Bearer stdio-secret-1', 'the placeholder was replaced before the child started');
  t.equal(env.REGION, 'eu', 'plain env values are passed as they are');
  t.notOk('AGENT_HOST_TEST_HOST_ONLY' in env, "the host's own variables (database URLs, keys) are not passed on");
  t.ok(env.PATH, 'the minimal default environment (PATH, HOME...) is');
});

t.test('the tracking tool answers with the spec 4.13 result shape', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const tracking = server('stdio', trackingStdio());
  const tools = await backend.listTools(tracking, opts);
  t.match(
    tools.find((tool) => tool.name === 'query_tracking'),
    { input_schema: { required: ['selectNo'], properties: { selectNo: { type: 'string' }, round: { type: 'integer' } } } },
    'input_schema keeps the required field and the types',
  );
  const outcome = await backend.callTool(tracking, 'query_tracking', { selectNo: 'MSKU1234567', query: 'where is MSKU1234567', round: 1 }, opts);
  t.same(outcome, { status: 'success', result: trackingResult('MSKU1234567') }, 'the structured result is the business payload');
  const failed = await backend.callTool(tracking, 'fail', {}, opts);
  t.same(
    failed,
    { status: 'error', result: 'tracking backend unavailable', error: 'tracking backend unavailable' },
    'a tool error (isError) is an error outcome',
  );
});

t.test('calls reuse one child process; concurrent first calls share it', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const tracking = server('stdio', trackingStdio());
  const first = await Promise.all([whoami(backend, tracking), whoami(backend, tracking), whoami(backend, tracking)]);
  t.equal(new Set(first.map((w) => w.pid)).size, 1, 'one child for three concurrent calls');
  t.equal((await whoami(backend, tracking)).pid, first[0]!.pid, 'a later call reaches the same child');
  t.equal(first[0]!.ppid, process.pid, 'the child is ours');
  const other = await whoami(backend, server('stdio', trackingStdio(), null, 'srv-2'));
  t.not(other.pid, first[0]!.pid, 'another server gets its own child');
});

t.test('an idle child is closed after the idle timeout and the next call starts a new one', async (t) => {
  const backend = await backendFor(t, 'stdio', { config: { idle_timeout_ms: 200 } });
  const tracking = server('stdio', trackingStdio());
  const { pid } = await whoami(backend, tracking);
  t.ok(await goneWithin(pid, 5_000), 'the idle child exited and was reaped');
  t.not((await whoami(backend, tracking)).pid, pid, 'a new child serves the next call');
});

t.test('a call past its timeout is a timeout outcome, and its child is ended', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const tracking = server('stdio', trackingStdio());
  const { pid } = await whoami(backend, tracking);
  const started = Date.now();
  const outcome = await backend.callTool(tracking, 'slow', { ms: 20_000 }, { timeoutMs: 400 });
  t.same(outcome, { status: 'timeout', result: null, error: 'tools/call slow timed out after 400 ms' }, 'the outcome is timeout, with the timeout named');
  t.ok(Date.now() - started < 2_000, 'the outcome comes at the timeout, not when the tool would finish');
  t.ok(await goneWithin(pid, 5_000), 'the child left in doubt by the timeout is gone');
  t.not((await whoami(backend, tracking)).pid, pid, 'the next call gets a fresh child');
});

t.test('timeouts hold with server-everything too, and a timeout covers starting the server', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const everything = server('stdio', everythingStdio());
  const slow = await backend.callTool(everything, 'trigger-long-running-operation', { duration: 10, steps: 2 }, { timeoutMs: 1_500 });
  t.equal(slow.status, 'timeout', 'a long-running operation past the timeout is a timeout outcome');
  const cold = await backend.callTool(server('stdio', trackingStdio(), null, 'cold'), 'whoami', {}, { timeoutMs: 50 });
  t.equal(cold.status, 'timeout', 'a server that cannot start within the timeout is a timeout too');
});

t.test('a child that crashes mid-call is an error outcome naming the exit, and is replaced', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const tracking = server('stdio', trackingStdio());
  const { pid } = await whoami(backend, tracking);
  const outcome = await backend.callTool(tracking, 'crash', {}, opts);
  t.equal(outcome.status, 'error', 'a crash is an error outcome, not a hang');
  t.match(outcome.error, /Connection closed.*server process exited with code 3/, 'the error names the exit code');
  t.notMatch(outcome.error, 'tracking fixture', 'but not the stderr, which only the log gets');
  t.ok(await goneWithin(pid, 1_000), 'the crashed child was reaped: no zombie');
  t.not((await whoami(backend, tracking)).pid, pid, 'the next call starts a new child');
});

t.test('a server that floods past max_message_bytes is an error outcome naming the limit; it is ended and replaced', async (t) => {
  const backend = await backendFor(t, 'stdio', { config: { max_message_bytes: 1024 * 1024 } });
  const tracking = server('stdio', trackingStdio());
  const { pid } = await whoami(backend, tracking);
  const under = await backend.callTool(tracking, 'flood', { bytes: 512 * 1024 }, opts);
  t.equal(under.status, 'success', 'a result under the limit is received');
  t.equal((under.result as string).length, 512 * 1024, 'whole');
  const over = await backend.callTool(tracking, 'flood', { bytes: 32 * 1024 * 1024 }, opts);
  t.equal(over.status, 'error', 'a 32 MB message is an error outcome, not a host out of memory');
  t.match(over.error, /more than 1048576 bytes \(\[plugins\.tools-mcp\] max_message_bytes\)/, 'the error names the limit');
  t.ok(await goneWithin(pid, 5_000), 'the flooding server was ended and reaped');
  t.not((await whoami(backend, tracking)).pid, pid, 'the next call starts a new server');
});

t.test('close() returns only once every child has exited and been reaped', async (t) => {
  const backend = await backendFor(t, 'stdio');
  const pids = [
    (await whoami(backend, server('stdio', trackingStdio(), null, 'a'))).pid,
    (await whoami(backend, server('stdio', trackingStdio(), null, 'b'))).pid,
  ];
  await backend.close();
  t.same(pids.filter(processExists), [], 'no child left, not even as a zombie');
  t.match(
    await backend.callTool(server('stdio', trackingStdio()), 'whoami', {}, opts),
    { status: 'error', error: /closed/ },
    'a closed backend starts no new child',
  );
});

t.test('a server behind a shell wrapper that ignores stdin EOF and SIGTERM is ended with its whole process group', async (t) => {
  // An operator who allows sh (and so anything): the policy is theirs to widen.
  const backend = await backendFor(t, 'stdio', { config: { shutdown_grace_ms: 200 }, stdioAllowedCommands: ['sh'] });
  const { command, args } = trackingStdio('--stubborn');
  const script = `${[command, ...args].map((a) => `'${a}'`).join(' ')}; exit $?`;
  const wrapped = server('stdio', { command: 'sh', args: ['-c', script] });
  const { pid, ppid } = await whoami(backend, wrapped);
  t.not(ppid, process.pid, 'the server is a grandchild, started by the shell');
  await backend.close();
  t.notOk(processExists(ppid), 'the shell is gone');
  t.ok(await goneWithin(pid, 2_000), 'the server the shell started is gone too, no orphan');
});

t.test('a server that cannot start is an error naming why; its stderr goes to the log only', async (t) => {
  const log = capturingLogger();
  const backend = await backendFor(t, 'stdio', { log });
  const missing = server('stdio', { command: '/nonexistent/mcp-server' });
  t.match(
    await backend.callTool(missing, 'x', {}, opts),
    { status: 'error', error: /command "\/nonexistent\/mcp-server" is not allowed/ },
    'a command the policy does not list is an error outcome naming the policy',
  );
  t.match(await backend.healthCheck(missing, opts), { ok: false, message: /stdio_allowed_commands/ }, 'health/check reports it as unhealthy');
  await t.rejects(backend.listTools(missing, opts), ValidationError, 'tools/list rejects with a validation error');

  const exits = server('stdio', { command: process.execPath, args: ['-e', 'console.error("missing TRACKING_API_URL"); process.exit(2)'] });
  const health = await backend.healthCheck(exits, opts);
  t.match(health, { ok: false, message: /server process exited with code 2/ }, 'the exit code explains it');
  t.notMatch(health.message, 'TRACKING_API_URL', 'the stderr is not in the answer');
  t.match(log.lines.join('\n'), 'missing TRACKING_API_URL', 'it is in the log');

  const cwd = server('stdio', { command: process.execPath, args: ['-e', 'process.exit(7 + require("node:fs").readdirSync(".").length)'] });
  t.match(await backend.healthCheck(cwd, opts), { ok: false, message: /exited with code 7/ }, 'a child starts in an empty working directory');
});

t.test('credential values never reach logs or error messages', async (t) => {
  const log = capturingLogger();
  const backend = await backendFor(t, 'stdio', { log });
  const secret = { ACCESS_TOKEN: 'leaky-secret-42' };
  // A server that prints its token to stderr and dies: the worst case for leaks.
  const leaky = server(
    'stdio',
    { command: process.execPath, args: ['-e', 'console.error("token=" + process.env.TOKEN); process.exit(1)'], env: { TOKEN: '<ACCESS_TOKEN>' } },
    secret,
  );
  const health = await backend.healthCheck(leaky, opts);
  t.notMatch(health.message, 'token=', 'the stderr is not in the answer');
  t.match(log.lines.join('\n'), 'token=***', 'the log keeps the stderr tail with the value masked');
  const call = await backend.callTool(leaky, 'x', {}, opts);
  const working = server('stdio', { ...trackingStdio(), env: { TOKEN: '<ACCESS_TOKEN>' } }, secret);
  await backend.callTool(working, 'crash', {}, opts);
  await backend.close();
  const everything = [health.message, call.error, ...log.lines].join('\n');
  t.ok(log.lines.length > 0, 'the backend did log');
  t.notMatch(everything, 'leaky-secret-42', 'the secret appears in no log line and no message');
});
