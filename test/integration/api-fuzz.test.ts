// Fuzzing over the OpenAPI document (issue 17): Schemathesis (PyPI, installed by the test harness) generates valid
// and invalid requests for every operation as a super admin with an API token, and for the operations open to anyone
// as an anonymous caller, and fails on a 5xx, a status or content type the document does not list, a body that breaks
// its schema, or a stack trace in a body (test/fixtures/fuzz/hooks.py). `npm test` runs a short, seeded pass; `npm
// run fuzz` a long one with fresh seeds.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buildOpenApiDocument, createServer } from '@agent-host/host';
import t from 'tap';
import { challengeHeader } from '../helpers/admins.js';
import { AdminClient, startTestHost } from '../helpers/host.js';

const EXAMPLES = Number(process.env.AGENT_HOST_FUZZ_EXAMPLES ?? 3);
const SEEDED = process.env.AGENT_HOST_FUZZ_EXAMPLES === undefined;
// In npm test, two Schemathesis passes of about 9,000 requests each took 240 s of the usual 300 s on a loaded CI
// machine, even at once: this file gets 600 s, so a slow machine is not a failure (a hang still is). `npm run fuzz`
// sets its own, longer timeout.
if (SEEDED) t.setTimeout(600_000);
const HOOKS = path.join(import.meta.dirname, '..', 'fixtures', 'fuzz');
const CHECKS = ['not_a_server_error', 'status_code_conformance', 'content_type_conformance', 'response_schema_conformance', 'no_stack_trace'];

interface FuzzRun {
  code: number;
  output: string;
  /** Test cases (requests) Schemathesis generated. */
  requests: number;
  /** Operations it tested. */
  operations: number;
}

async function fuzz(schemaFile: string, baseUrl: string, headers: string[]): Promise<FuzzRun> {
  // Schemathesis keeps its cache in its working directory: the run's temporary one, not the clone.
  const args = [
    'run',
    schemaFile,
    '--url',
    baseUrl,
    '--checks',
    CHECKS.join(','),
    '--max-examples',
    String(EXAMPLES),
    '--workers',
    '1',
    '--no-color',
    // Logging out, or revoking the token it found in GET /admin/api-tokens, would make every later request a 401.
    '--exclude-operation-id',
    'post_admin_auth_logout',
    '--exclude-operation-id',
    'delete_admin_api_tokens_by_token_id',
    ...(SEEDED ? ['--seed', '15'] : []),
    ...headers.flatMap((header) => ['--header', header]),
  ];
  const child = spawn(process.env.TEST_SCHEMATHESIS_BIN ?? 'st', args, {
    cwd: path.dirname(schemaFile),
    env: { ...process.env, SCHEMATHESIS_HOOKS: 'hooks', PYTHONPATH: HOOKS },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  // The summary's "Tested: N" operations and "N generated" test cases.
  return { code, output, requests: Number(/(\d+) generated/.exec(output)?.[1] ?? 0), operations: Number(/Tested: (\d+)/.exec(output)?.[1] ?? 0) };
}

t.test('what fuzzing found stays fixed', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const verify = await admin.request('POST', '/admin/auth/challenges/null,null/verify', { nonce: '0', password: 'x' });
  t.match(verify, { status: 404, body: { code: 'CHALLENGE_NOT_FOUND' } }, 'a challenge id that is not a UUID is a 404, not a database error');
  const rollback = await admin.request('POST', '/agents/null,null/versions/edca46dd-0acf-42d3-b3f2-5ba5bd5db3cf/rollback');
  t.match(rollback, { status: 404, body: { code: 'AGENT_NOT_FOUND', detail: 'no agent null,null: it is not a UUID' } }, 'so is an agent id');
  const credential = await admin.request('POST', '/mcp-credentials', { name: 'Fuzz desk', allowed_destinations: ['a\u0000b'], secret_payload: { KEY: 'v' } });
  t.match(
    credential,
    { status: 422, body: { errors: [{ loc: ['body', 'allowed_destinations', 0], type: 'nul_character' }] } },
    'a NUL character in a body is a 422 where it is',
  );
  const costly = await admin.request('POST', '/agents', { name: 'Costly', agent_type: 'chat', max_cost_usd_monthly: 1.92e16 });
  t.match(
    costly,
    { status: 422, body: { errors: [{ loc: ['body', 'max_cost_usd_monthly'], type: 'too_big' }] } },
    'a cost limit beyond its column is a 422, not a numeric overflow',
  );
  const session = await admin.request('GET', '/sessions/a%00b/messages');
  t.match(session, { status: 404, body: { code: 'SESSION_NOT_FOUND' } }, 'and in a session id a 404');
});

t.test('a fuzz run over /openapi.json finds no 5xx, no answer off its schema, no stack trace', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const token = (await admin.request('POST', '/admin/api-tokens', { name: 'fuzz' }, await challengeHeader(admin))).body.token as string;
  // Something for the generated ids and bodies to meet: an agent, a source, a session.
  const agent = (await admin.request('POST', '/agents', { name: 'Fuzz desk', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  await admin.request('POST', '/knowledge-sources', { name: 'Fuzz handbook' });
  await admin.request('POST', `/public/agents/${agent.agent_id}/sessions`);

  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-fuzz-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const document = buildOpenApiDocument(createServer(host.app).routes);
  /** The document in a folder of the run's own, where its Schemathesis keeps its cache. */
  const schemaFile = async (run: number, schema: object) => {
    await mkdir(path.join(dir, String(run)));
    const file = path.join(dir, String(run), 'openapi.json');
    await writeFile(file, JSON.stringify(schema));
    return file;
  };

  // An anonymous caller fuzzes the operations open to it (they declare no security). Every other one refuses it
  // before reading its input, which route-access.test.ts checks route by route.
  const publicOnly = {
    ...document,
    paths: Object.fromEntries(
      Object.entries(document.paths)
        .map(([at, operations]) => [at, Object.fromEntries(Object.entries(operations).filter(([, operation]) => !operation.security))])
        .filter(([, operations]) => Object.keys(operations).length > 0),
    ),
  };
  // The two callers' runs go at once: one after the other they came within seconds of the file's timeout.
  const callers = [
    ['a super admin with an API token', [`Authorization: Bearer ${token}`], document, 100],
    ['an anonymous caller', [], publicOnly, 15],
  ] as const;
  const runs = await Promise.all(callers.map(async ([, headers, schema], index) => fuzz(await schemaFile(index, schema), host.url, [...headers])));
  for (const [index, [who, , , operations]] of callers.entries()) {
    const run = runs[index]!;
    t.comment(`${who}: ${run.requests} requests over ${run.operations} operations, ${EXAMPLES} examples each${SEEDED ? ' (seeded)' : ''}`);
    t.ok(run.operations >= operations, `as ${who}, Schemathesis tested ${run.operations} operations`);
    t.equal(
      run.code,
      0,
      `as ${who}, no check failed${run.code === 0 ? '' : `:\n${run.output.slice(Math.max(0, run.output.indexOf('FAILURES')), run.output.indexOf('WARNINGS'))}`}`,
    );
  }
});
