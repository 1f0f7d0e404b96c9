// tools-mcp: connection_config validation (spec 2.7), the `args` string
// form, and credential placeholders in headers and env.
import t from 'tap';
import { splitArgs } from '../src/lib/connection-config.js';
import { MissingSecretError, redactSecrets, substituteSecrets } from '../src/lib/placeholders.js';
import { backendFor } from '../../../test/fixtures/mcp/clients.js';

t.test('stdio connection_config: command is required, args is a string or an array of strings', async (t) => {
  const stdio = await backendFor(t, 'stdio');
  t.same(stdio.validateConfig({ command: 'node', args: ['server.js', '--port', '0'] }), [], 'args as an array is accepted');
  t.same(stdio.validateConfig({ command: 'node', args: 'server.js --port 0' }), [], 'args as a string is accepted');
  t.same(stdio.validateConfig({ command: 'node' }), [], 'args is optional');
  t.same(stdio.validateConfig({ command: 'node', args: null, env: null }), [], 'null counts as unset');

  const missing = stdio.validateConfig({ args: ['x'] });
  t.same(
    missing.map((i) => i.loc),
    [['connection_config', 'command']],
    'a missing command is reported at connection_config.command',
  );
  t.match(missing[0]!.msg, 'command is required for stdio', 'the message says what is missing');
  t.same(
    stdio.validateConfig({ command: '   ' }).map((i) => i.msg),
    ['command is required for stdio'],
    'a blank command counts as missing',
  );

  t.same(
    stdio.validateConfig({ command: 'node', args: [1, 2] }).map((i) => [i.loc[1], i.msg]),
    [['args', 'args must be a string or an array of strings']],
    'args of non-strings is refused',
  );
  t.same(
    stdio.validateConfig({ command: 'node', args: 'a "b c' }).map((i) => i.msg),
    ['args has an unclosed quote'],
    'an args string with an unclosed quote is refused',
  );
  t.same(
    stdio.validateConfig({ command: 'node', env: { 'BAD-NAME': 'x' } }).map((i) => i.loc.slice(0, 2)),
    [['connection_config', 'env']],
    'env names must be variable names',
  );
  t.same(
    stdio.validateConfig({ command: 'node', comand: 'x' }).map((i) => i.type),
    ['unrecognized_keys'],
    'an unknown key (a typo) is refused',
  );
  t.same(
    stdio.validateConfig({ command: 'node', url: 'http://x' }).map((i) => i.type),
    ['unrecognized_keys'],
    'http_sse keys are not stdio keys',
  );
});

t.test('http_sse connection_config: url is required and must start with http:// or https://', async (t) => {
  const http = await backendFor(t, 'http_sse');
  t.same(
    http.validateConfig({ url: 'https://tools.example.com/mcp', headers: { Authorization: 'Bearer <ACCESS_TOKEN>' } }),
    [],
    'a url with headers holding placeholders is accepted',
  );
  t.same(http.validateConfig({ url: 'http://127.0.0.1:9/sse', http_transport: 'sse' }), [], 'the SSE transport may be chosen by config');
  t.same(
    http.validateConfig({ url: 'https://api.example.com/track', import_mode: 'url', http_method: 'POST', tool_name: 'query_tracking' }),
    [],
    'import_mode=url takes http_method and tool_name',
  );
  t.same(http.validateConfig({ url: 'https://api.example.com/track', import_mode: 'url', http_method: 'get' }), [], 'http_method is case-insensitive');

  t.same(
    http.validateConfig({}).map((i) => [i.loc, i.msg]),
    [[['connection_config', 'url'], 'url is required']],
    'a missing url is reported',
  );
  for (const url of ['ftp://files.example.com', 'tools.example.com/mcp', 'ws://x/mcp']) {
    t.same(
      http.validateConfig({ url }).map((i) => i.msg),
      ['url must start with http:// or https://'],
      `"${url}" is refused`,
    );
  }
  t.same(
    http.validateConfig({ url: 'http://' }).map((i) => i.msg),
    ['url is not a valid URL'],
    'a url that does not parse is refused',
  );
  t.same(
    http.validateConfig({ url: 'http://x', import_mode: 'rest' }).map((i) => i.loc[1]),
    ['import_mode'],
    'import_mode is mcp or url',
  );
  t.same(
    http.validateConfig({ url: 'http://x', import_mode: 'url', http_method: 'PUT' }).map((i) => i.msg),
    ['http_method must be GET or POST'],
    'http_method other than GET or POST is refused',
  );
  t.same(
    http.validateConfig({ url: 'http://x', import_mode: 'url', tool_name: ' ' }).map((i) => i.loc[1]),
    ['tool_name'],
    'tool_name must not be blank',
  );
  t.same(
    http.validateConfig({ url: 'http://x', http_transport: 'websocket' }).map((i) => i.loc[1]),
    ['http_transport'],
    'http_transport is auto, streamable_http or sse',
  );
  t.same(
    http.validateConfig({ url: 'http://x', headers: { 'Bad Header': 'v' } }).map((i) => i.loc[1]),
    ['headers'],
    'header names must be HTTP tokens',
  );
  t.same(
    http.validateConfig({ url: 'http://x', headers: { 'X-Count': 3 } }).map((i) => i.loc),
    [['connection_config', 'headers', 'X-Count']],
    'header values must be strings',
  );
  t.same(
    http.validateConfig({ url: 'http://x', command: 'node' }).map((i) => i.type),
    ['unrecognized_keys'],
    'stdio keys are not http_sse keys',
  );
});

t.test('an invalid stored config fails calls with its issues instead of reaching a server', async (t) => {
  const stdio = await backendFor(t, 'stdio');
  const target = { server_id: 's', transport_type: 'stdio', connection_config: { args: ['x'] }, secret: null };
  const outcome = await stdio.callTool(target, 'anything', {}, { timeoutMs: 1_000 });
  t.equal(outcome.status, 'error', 'tools/call is an error outcome');
  t.match(outcome.error, 'command: command is required for stdio', 'naming the field and the rule');
  const listed = await stdio.listTools(target, { timeoutMs: 1_000 }).catch((e: unknown) => e);
  t.match(listed, { status: 422, issues: [{ loc: ['connection_config', 'command'] }] }, 'tools/list refuses with a 422 naming the field');
  t.match(
    await stdio.healthCheck(target, { timeoutMs: 1_000 }),
    { ok: false, message: /command is required/ },
    'health/check reports the invalid config as unhealthy',
  );
});

t.test('an args string splits into argv like a shell would, without running one', async (t) => {
  t.same(splitArgs('server.js --port 8080'), ['server.js', '--port', '8080'], 'whitespace separates words');
  t.same(splitArgs('  -y   @scope/server  '), ['-y', '@scope/server'], 'runs of whitespace separate words');
  t.same(
    splitArgs(`--name "two words" --quote 'it''s' --empty ""`),
    ['--name', 'two words', '--quote', 'its', '--empty', ''],
    'quotes group, and empty quotes are an empty word',
  );
  t.same(splitArgs(String.raw`a\ b "c\"d" 'e\f'`), ['a b', 'c"d', String.raw`e\f`], 'backslash escapes outside single quotes');
  t.same(splitArgs('$(rm -rf /) `id` $HOME'), ['$(rm', '-rf', '/)', '`id`', '$HOME'], 'nothing is expanded or executed');
  t.equal(splitArgs('"open'), null, 'an unclosed quote is an error, not a guess');
  t.same(splitArgs(''), [], 'an empty string is no arguments');
});

t.test('placeholders in header and env values take the credential values', async (t) => {
  const secret = { ACCESS_TOKEN: 'tok-123', tenant: 'acme' };
  t.same(
    substituteSecrets({ Authorization: 'Bearer <ACCESS_TOKEN>', 'X-Tenant': '<TENANT>', Accept: 'application/json' }, secret, 'headers'),
    {
      Authorization: 'Bearer tok-123',
      'X-Tenant': 'acme',
      Accept: 'application/json',
    },
    'exact names match, and a name differing only in case finds its value',
  );
  t.same(substituteSecrets({ PAIR: '<tenant>:<ACCESS_TOKEN>' }, secret, 'env'), { PAIR: 'acme:tok-123' }, 'several placeholders in one value');

  const missing = (() => {
    try {
      substituteSecrets({ Authorization: 'Bearer <API_KEY>' }, secret, 'headers');
    } catch (error) {
      return error as Error;
    }
  })();
  t.type(missing, MissingSecretError, 'a placeholder the credential lacks is an error, never sent as is');
  t.equal(
    missing?.message,
    'headers.Authorization references <API_KEY>, but the credential holds no such value',
    'the error names the placeholder, never a value',
  );
  t.throws(
    () => substituteSecrets({ TOKEN: '<ACCESS_TOKEN>' }, null, 'env'),
    { message: 'env.TOKEN references <ACCESS_TOKEN>, but the server has no credential' },
    'a placeholder with no credential at all is an error too',
  );
});

t.test('credential values are masked in any text that leaves the plugin', async (t) => {
  const secret = { ACCESS_TOKEN: 'tok-123', LONGER: 'tok-123-extended' };
  t.equal(
    redactSecrets('401: bad token tok-123-extended (tok-123)', secret),
    '401: bad token *** (***)',
    'longer values are masked whole before their prefixes',
  );
  t.equal(redactSecrets('nothing here', null), 'nothing here', 'without a credential the text is unchanged');
});
