import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConflictError, ERROR_CODES, NotFoundError, safeValidate, TooManyRequestsError, ValidationError, z } from '@agent-host/sdk';
import t from 'tap';
import { errorEnvelope } from '../../host/src/http/error-envelope.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const request = { id: 'req-1', method: 'GET', path: '/agents/x' };

t.test('docs/error-codes.md lists the catalog, code for code and status for status', async (t) => {
  const doc = await readFile(path.join(root, 'docs/error-codes.md'), 'utf8');
  const rows = [...doc.matchAll(/^\| `([A-Z_]+)` \| (\d{3}|event) \|/gm)].map(([, code, status]) => [code, status]);
  t.same(
    rows,
    Object.entries(ERROR_CODES).map(([code, { status }]) => [code, status === null ? 'event' : String(status)]),
  );
});

t.test('every code the sources give is in the catalog', async (t) => {
  const files: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.name.endsWith('.ts')) files.push(full);
    }
  };
  await walk(path.join(root, 'core/src'));
  await walk(path.join(root, 'host/src'));
  for (const plugin of await readdir(path.join(root, 'plugins'))) await walk(path.join(root, 'plugins', plugin, 'src')).catch(() => undefined);
  const given = new Set<string>();
  for (const file of files) for (const [, code] of (await readFile(file, 'utf8')).matchAll(/\bcode: '([A-Z][A-Z_]+)'/g)) given.add(code!);
  t.ok(given.size >= 60, `${given.size} codes found in the sources`);
  for (const code of given) t.ok(code in ERROR_CODES, `${code} is in the catalog`);
});

t.test('one envelope for every error', async (t) => {
  const notFound = errorEnvelope(new NotFoundError('agent x not found', { code: 'AGENT_NOT_FOUND' }), request);
  t.same(notFound, {
    status: 404,
    headers: {},
    body: { detail: 'agent x not found', code: 'AGENT_NOT_FOUND', message: 'agent x not found', request_id: 'req-1' },
  });
  t.equal(errorEnvelope(new ConflictError('busy'), request).body.code, 'CONFLICT', 'a class without a specific code gives its generic one');

  const structured = errorEnvelope(
    new ConflictError({ code: 'DATASET_REFERENCED_BY_EVALUATION_RUNS', evaluation_run_count: 2 }, { code: 'CONFLICT' }),
    request,
  );
  t.same(structured.body.detail, { code: 'DATASET_REFERENCED_BY_EVALUATION_RUNS', evaluation_run_count: 2 }, 'a structured detail keeps its shape');

  const issues = [
    { loc: ['body', 'name'], msg: 'is required', type: 'missing' },
    { loc: ['query', 'limit'], msg: 'must be at most 200', type: 'too_big' },
  ];
  const invalid = errorEnvelope(new ValidationError(issues), request);
  t.equal(invalid.status, 422);
  t.same(invalid.body.errors, issues, 'a 422 lists its issues in errors');
  t.same(invalid.body.detail, issues, 'and in detail, as before');
  t.equal(invalid.body.message, 'the request failed validation: body.name is required; query.limit must be at most 200');
  t.equal(invalid.body.code, 'VALIDATION_FAILED');

  const limited = errorEnvelope(new TooManyRequestsError('slow down', 7), request);
  t.same([limited.status, limited.headers, limited.body.code], [429, { 'retry-after': '7' }, 'RATE_LIMITED']);

  const unexpected = errorEnvelope(new Error('password=hunter2 at db.internal'), request);
  t.same(
    unexpected.body,
    { detail: 'internal server error', code: 'INTERNAL_ERROR', message: 'internal server error', request_id: 'req-1' },
    'an unexpected error says nothing of itself',
  );

  const noRoute = errorEnvelope(Object.assign(new Error('/nowhere does not exist'), { name: 'ResourceNotFoundError', statusCode: 404 }), {
    ...request,
    path: '/nowhere',
  });
  t.same(noRoute.body, { detail: 'no route for GET /nowhere', code: 'ROUTE_NOT_FOUND', message: 'no route for GET /nowhere', request_id: 'req-1' });
});

t.test('validation messages are the host’s own words', async (t) => {
  const schema = z
    .object({
      name: z.string().min(2),
      kind: z.enum(['chat', 'workflow']),
      count: z.number().int().max(3),
      tags: z.array(z.string()).max(1),
      note: z.string().min(1, 'say something'),
      flag: z.boolean(),
    })
    .strict();
  const result = safeValidate(schema, { kind: 'robot', count: 9, tags: ['a', 'b'], note: '', flag: 'yes', extra: 1 }, ['body']);
  t.notOk(result.success);
  if (result.success) return;
  const byField = Object.fromEntries(result.issues.map((issue) => [issue.loc.slice(1).join('.') || '(object)', [issue.type, issue.msg]]));
  t.same(byField, {
    name: ['missing', 'is required'],
    kind: ['invalid_value', 'must be one of "chat", "workflow"'],
    count: ['too_big', 'must be at most 3'],
    tags: ['too_big', 'must have at most 1 items'],
    note: ['too_small', 'say something'],
    flag: ['invalid_type', 'must be true or false, not a string'],
    '(object)': ['unrecognized_keys', 'unknown field "extra"'],
  });
  for (const issue of result.issues) t.equal(issue.loc[0], 'body', 'loc starts where the value came from');
  t.same(safeValidate(schema.pick({ name: true }), { name: 'ok' }), { success: true, data: { name: 'ok' } });
});
