import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createServer, openApiPath } from '@agent-host/host';
import { ERROR_CODES } from '@agent-host/sdk';
import { Parser } from '@asyncapi/parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { validate } from '@readme/openapi-parser';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';

const HOST_VERSION = (JSON.parse(readFileSync(new URL('../../host/package.json', import.meta.url), 'utf8')) as { version: string }).version;
const METHODS: Record<string, string> = { get: 'get', post: 'post', put: 'put', patch: 'patch', del: 'delete' };
const EXPECTED_TYPE: Record<string, RegExp> = { js: /^(text|application)\/javascript\b/, css: /^text\/css\b/, png: /^image\/png$/ };

// Where the host's asset packages are installed, to compare what it serves with the files.
const hostRequire = createRequire(new URL('../../host/package.json', import.meta.url));
const packageDir = (name: string) => path.dirname(hostRequire.resolve(`${name}/package.json`));
const ASSET_DIRS: Record<string, string> = {
  '/docs/assets/': packageDir('swagger-ui-dist'),
  '/redoc/assets/': path.join(packageDir('redoc'), 'bundles'),
};

/** A GET that keeps the body raw (AdminClient.request parses JSON); sends the client's cookies when given one. */
async function rawGet(baseUrl: string, pathname: string, client?: AdminClient) {
  const cookie = client
    ? [...client.cookies]
        .filter(([, c]) => pathname.startsWith(c.path))
        .map(([name, c]) => `${name}=${c.value}`)
        .join('; ')
    : '';
  const response = await fetch(baseUrl + pathname, { headers: cookie ? { cookie } : {} });
  const body = Buffer.from(await response.arrayBuffer());
  return { status: response.status, type: response.headers.get('content-type') ?? '', body, text: body.toString('utf8') };
}

/** The src and href values of an HTML page. */
const references = (html: string) => [...html.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);

t.test('/openapi.json, /docs and /redoc', async (t) => {
  const host = await startTestHost(t);
  const { routes } = createServer(host.app);

  t.test('without login all three answer 401 {detail}', async (t) => {
    for (const pathname of ['/openapi.json', '/docs', '/redoc']) {
      const { status, type, text } = await rawGet(host.url, pathname);
      t.equal(status, 401, `${pathname} needs a login`);
      t.match(type, /^application\/json/);
      t.match(JSON.parse(text), { detail: 'administrator login required', code: 'LOGIN_REQUIRED', request_id: String });
    }
  });

  const admin = new AdminClient(host.url);
  const login = await admin.login();
  t.equal(login.status, 200, 'the bootstrap administrator logs in');

  t.test('the OpenAPI 3.1 document', async (t) => {
    const { status, body: doc, headers } = await admin.request('GET', '/openapi.json');
    t.equal(status, 200);
    t.match(headers.get('content-type'), /^application\/json/);
    t.equal(doc.openapi, '3.1.0');
    t.same([doc.info.title, doc.info.version], ['agent-host', HOST_VERSION]);
    t.same(doc.components.securitySchemes.agent_host_access, {
      type: 'apiKey',
      in: 'cookie',
      name: 'agent_host_access',
      description: doc.components.securitySchemes.agent_host_access.description,
    });
    t.same(doc.components.schemas.HTTPError.required, ['detail', 'code', 'message', 'request_id']);
    t.same(doc.components.schemas.ValidationError.properties.errors.items.required, ['loc', 'msg', 'type']);
    t.same(doc.components.schemas.ErrorCode.enum, Object.keys(ERROR_CODES), 'the error codes are the catalog');

    t.test('every registered route is documented, and nothing else', async (t) => {
      t.ok(routes.length >= 14, 'the app routes and the doc routes are enumerated');
      const operationRoutes = routes.filter((route) => !route.meta);
      t.same(
        routes
          .filter((route) => route.meta)
          .map((route) => route.path)
          .sort(),
        ['/asyncapi.json', '/console', '/console/*', '/docs', '/docs/assets/:file', '/openapi.json', '/redoc', '/redoc/assets/:file'],
        'the documentation routes are not operations',
      );
      let operations = 0;
      for (const path of Object.values(doc.paths) as Record<string, unknown>[]) operations += Object.keys(path).length;
      t.equal(operations, operationRoutes.length, 'one operation per route');
      for (const route of operationRoutes) {
        const path = openApiPath(route.path);
        const name = `${route.method.toUpperCase()} ${path}`;
        const op = doc.paths[path]?.[METHODS[route.method]!];
        if (!t.ok(op, `${name} is documented`)) continue;
        t.equal(op.summary, route.summary, `${name} has its summary`);
        for (const [, param] of route.path.matchAll(/:(\w+)/g)) {
          t.ok(
            op.parameters?.some((p: any) => p.in === 'path' && p.name === param && p.required === true),
            `${name} declares the path parameter ${param}`,
          );
        }
        if ('public' in route.access) {
          t.notOk(op.security, `${name} is public`);
        } else {
          t.same(op.security, [{ agent_host_access: [] }, { admin_api_token: [] }], `${name} needs the access cookie or an API token`);
          t.equal(op.responses['401']?.content['application/json'].schema.$ref, '#/components/schemas/HTTPError', `${name} documents 401`);
        }
        if ('permission' in route.access) {
          t.equal(op['x-permission'], route.access.permission, `${name} names its permission`);
          t.match(op.description, route.access.permission, `${name} mentions its permission`);
          t.ok(op.responses['403'], `${name} documents 403`);
        }
        if (route.body) {
          t.ok(op.requestBody?.content['application/json'].schema, `${name} documents its body`);
          // A route that refuses with 422 itself (not only on validation) documents the general envelope.
          const envelope = route.refusals?.[422] ? 'HTTPError' : 'ValidationError';
          t.equal(op.responses['422']?.content['application/json'].schema.$ref, `#/components/schemas/${envelope}`, `${name} documents 422`);
        } else if (route.multipart) {
          t.equal(
            op.requestBody?.content['multipart/form-data'].schema.properties[route.multipart.field]?.format,
            'binary',
            `${name} documents its upload field`,
          );
        } else {
          t.notOk(op.requestBody, `${name} takes no body`);
        }
        if (route.query) {
          t.ok(op.responses['422'], `${name} documents 422 for its query`);
          for (const field of Object.keys((route.query as any).shape)) {
            t.ok(
              op.parameters?.some((p: any) => p.in === 'query' && p.name === field),
              `${name} declares the query parameter ${field}`,
            );
          }
        }
        const success = op.responses[String(route.success?.status ?? 200)];
        t.ok(success, `${name} documents its success status`);
        if (route.success?.status !== 204) t.ok(success?.content, `${name} describes its answer`);
        if (success?.content?.['application/json']) t.ok(success.content['application/json'].schema, `${name} declares the schema of its answer`);
        t.notOk(
          Object.keys(op.responses).some((status) => status.startsWith('4') && !op.responses[status].description),
          `${name} says when each refusal happens`,
        );
        for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
          t.ok(response.headers?.['X-Request-Id'], `${name} ${status} names its X-Request-Id`);
        }
        for (const status of Object.keys(route.refusals ?? {})) t.ok(op.responses[status], `${name} documents ${status}`);
      }
    });

    t.test('uploads, session search, public session starts and the stream say what they answer', async (t) => {
      const upload = doc.paths['/knowledge-sources/{source_id}/documents'].post;
      t.same(Object.keys(upload.responses).sort(), ['201', '400', '401', '403', '404', '409', '413', '415', '503', 'default']);
      t.same(upload.requestBody.content['multipart/form-data'].schema.required, ['file']);
      const q = doc.paths['/sessions'].get.parameters.find((p: any) => p.name === 'q');
      t.match(q, { in: 'query', required: false, schema: { type: 'string', minLength: 3, maxLength: 200 } }, 'q is at least 3 characters');
      const limit = doc.paths['/sessions'].get.parameters.find((p: any) => p.name === 'limit');
      t.match(limit, { required: false, schema: { minimum: 1, maximum: 200, default: 50 } });
      const start = doc.paths['/public/agents/{agent_id}/sessions'].post;
      t.same(Object.keys(start.responses).sort(), ['201', '400', '404', '413', '415', '429', 'default']);
      t.same([...start.responses['201'].content['application/json'].schema.required].sort(), [
        'agent_id',
        'human_takeover_enabled',
        'session_id',
        'status',
        'takeover_owner_id',
        'takeover_owner_name',
        'takeover_released_at',
        'takeover_started_at',
        'updated_at',
      ]);
      const stream = doc.paths['/stream'].post;
      t.ok(stream.responses['200'].content['text/event-stream'], 'the stream is an event stream');
      t.ok(stream.responses['429'], 'refused by rate limits with 429');
      t.same(
        stream.responses['200'].content['text/event-stream']['x-item-schema'],
        { $ref: '#/components/schemas/StreamEvent' },
        'each event is a StreamEvent',
      );
      t.same(
        doc.components.schemas.StreamEvent.oneOf.map((event: any) => event.properties.type.const),
        ['token', 'error', 'done'],
        'the union of token, error and done',
      );
    });

    t.test('every example in the document is valid for its schema', async (t) => {
      const ajv = new Ajv2020({ strict: false, formats: { uuid: true, 'date-time': true, uri: true, email: true } });
      ajv.addSchema({ ...doc, $id: 'openapi' });
      const examples = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, methods]) =>
        Object.entries(methods).flatMap(([method, op]) =>
          op.requestBody?.content['application/json']?.example ? [{ path, method, example: op.requestBody.content['application/json'].example }] : [],
        ),
      );
      t.ok(examples.length >= 5, `${examples.length} request bodies have an example`);
      for (const { path, method, example } of examples) {
        const pointer = `openapi#/paths/${encodeURIComponent(path.replaceAll('~', '~0').replaceAll('/', '~1'))}/${method}/requestBody/content/application~1json/schema`;
        const valid = ajv.validate({ $ref: pointer }, example);
        t.ok(valid, `the example of ${method.toUpperCase()} ${path} is valid${valid ? '' : `: ${ajv.errorsText(ajv.errors)}`}`);
      }
    });

    t.test('the login body requires username and password', async (t) => {
      const op = doc.paths['/admin/auth/login'].post;
      const schema = op.requestBody.content['application/json'].schema;
      t.equal(op.requestBody.required, true);
      t.equal(schema.type, 'object');
      t.same([...schema.required].sort(), ['password', 'username']);
      t.match(schema.properties, { username: { type: 'string' }, password: { type: 'string' } });
      t.notOk(schema.$schema, 'no per-schema dialect: OpenAPI 3.1 defaults to 2020-12');
    });

    t.test('the system-settings write documents its permission and challenge header', async (t) => {
      const op = doc.paths['/admin/system-settings/{config_key}'].patch;
      t.equal(op['x-permission'], 'system_settings.write');
      t.match(op.description, /system_settings\.write/);
      t.match(op.description, /x-admin-challenge-token/);
      const header = op.parameters.find((p: any) => p.in === 'header');
      t.match(header, { name: 'x-admin-challenge-token', in: 'header', required: true, schema: { type: 'string' } });
      t.ok(op.parameters.some((p: any) => p.in === 'path' && p.name === 'config_key'));
      t.same(Object.keys(op.responses).sort(), ['200', '400', '401', '403', '404', '413', '415', '422', 'default']);
    });

    t.test('agent-host openapi prints the same document, starting nothing', async (t) => {
      const printed = execFileSync(process.execPath, ['--no-deprecation', 'host/dist/cli.js', 'openapi'], {
        cwd: new URL('../..', import.meta.url),
        env: { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
      t.same(JSON.parse(printed), doc);
    });

    t.test('a validator accepts the document', async (t) => {
      const result = await validate(structuredClone(doc));
      t.ok(result.valid, result.valid ? 'valid OpenAPI' : JSON.stringify(result.errors));
      t.equal(result.specification, 'OpenAPI');
    });
  });

  t.test('the AsyncAPI 3.0 document of the WebSocket interface', async (t) => {
    const { status, body: doc } = await admin.request('GET', '/asyncapi.json');
    t.equal(status, 200);
    t.equal(doc.asyncapi, '3.0.0');
    t.equal((await fetch(`${host.url}/asyncapi.json`)).status, 401, 'it needs a login, like /openapi.json');
    const { diagnostics, document } = await new Parser().parse(JSON.stringify(doc));
    t.same(
      diagnostics.filter((d) => d.severity <= 1).map((d) => `${d.code}: ${d.message} at ${d.path.join('.')}`),
      [],
      'the AsyncAPI parser finds no error or warning',
    );
    t.ok(document, 'and parses it');
    t.same(
      Object.keys(doc.channels)
        .map((c) => doc.channels[c].address)
        .sort(),
      ['/demo', '/public/ws/{session_id}', '/ws/{session_id}'],
    );
    t.same(doc.operations.demoReceive.messages, [{ $ref: '#/channels/demo/messages/ai_response' }], 'the demo gateway answers with ai_response');
    const outbound = ['error', 'handoff_requested', 'history', 'message', 'session', 'system', 'takeover_event', 'tool_approval'];
    t.same(doc.operations.wsReceive.messages.map((m: { $ref: string }) => m.$ref.split('/').at(-1)).sort(), outbound, 'every event the server sends');
    t.notOk(
      doc.operations.publicWsReceive.messages.some((m: { $ref: string }) => m.$ref.endsWith('/tool_approval')),
      'tool approvals go to administrators only',
    );
    t.notOk(
      doc.operations.publicWsReceive.messages.some((m: { $ref: string }) => m.$ref.endsWith('/handoff_requested')),
      'handoff requests go to administrators only',
    );
    t.same(doc.components.messages.error.payload.properties.code.enum, Object.keys(ERROR_CODES), 'error events carry catalog codes');
  });

  for (const [page, prefix, title] of [
    ['/docs', '/docs/assets/', /Swagger UI/],
    ['/redoc', '/redoc/assets/', /ReDoc/],
  ] as const) {
    t.test(`${page} serves an HTML page whose assets come from the host`, async (t) => {
      const { status, type, text } = await rawGet(host.url, page, admin);
      t.equal(status, 200);
      t.match(type, /^text\/html/);
      t.match(text, /^<!doctype html>/i, 'raw HTML, not a JSON-encoded string');
      t.match(text, title);
      t.match(text, /["']\/openapi\.json["']/, 'loads the document from the host');
      const refs = references(text);
      t.same(
        refs.filter((r) => /^[a-z]+:|^\/\//i.test(r)),
        [],
        'nothing from another origin (the host may be offline)',
      );
      const assets = refs.filter((r) => r.startsWith(prefix));
      t.ok(
        assets.some((a) => a.endsWith('.js')),
        'loads a script from the host',
      );
      if (page === '/docs')
        t.ok(
          assets.some((a) => a.endsWith('.css')),
          'loads the stylesheet from the host',
        );
      for (const asset of assets) {
        const served = await rawGet(host.url, asset, admin);
        t.equal(served.status, 200, `${asset} is served`);
        t.match(served.type, EXPECTED_TYPE[asset.split('.').pop()!]!, `${asset} has its content-type`);
        t.ok(served.body.equals(readFileSync(path.join(ASSET_DIRS[prefix]!, asset.slice(prefix.length)))), `${asset} is the package's file`);
        const anonymous = await rawGet(host.url, asset);
        t.equal(anonymous.status, 401, `${asset} needs a login`);
        t.match(JSON.parse(anonymous.text), { detail: 'administrator login required', code: 'LOGIN_REQUIRED', request_id: String });
      }
    });
  }

  t.test('only allowlisted asset names are served', async (t) => {
    for (const pathname of [
      '/docs/assets/..%2F..%2Fpackage.json',
      '/docs/assets/..%2F..%2F..%2F..%2Fhost%2Fpackage.json',
      '/redoc/assets/..%2Fpackage.json',
      '/docs/assets/%2e%2e%2fpackage.json',
      '/docs/assets/index.html',
      '/docs/assets/swagger-ui-bundle.js.map',
      '/redoc/assets/swagger-ui.css',
      '/docs/assets/__proto__',
    ]) {
      const { status, type, text } = await rawGet(host.url, pathname, admin);
      t.equal(status, 404, `${pathname} is refused`);
      t.match(type, /^application\/json/);
      t.notMatch(text, /"name"\s*:/, `${pathname} leaks no file`);
      t.type(JSON.parse(text).detail, 'string');
    }
  });
});
