// A streamed chat turn runs outside the request scope: the scope's storage turns on Node's promise hooks, which every
// promise of the process pays for, and is switched off again whenever no scoped request runs. The turn names its
// request on what it logs by hand. A host process of its own: the tests' own processes always run under promise hooks
// (tap's), so only a host started apart can show them off.
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { startHostProcess } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';
import { AdminClient } from '../helpers/host.js';
import { createSource } from '../helpers/knowledge.js';
import { createTestDatabase } from '../helpers/services.js';
import { stream, tokensOf } from '../helpers/sse.js';

const PROBE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/plugins/promise-hooks-probe');

t.test('a streamed turn runs without promise hooks unless a scoped request runs beside it', async (t) => {
  const fixture = await startOpenAiFixture({ respond: () => ({ status: 500, error: { message: 'the model is down' } }) });
  t.teardown(() => fixture.close());
  const { url, run } = await startHostProcess(t, await createTestDatabase(t), {
    AGENT_HOST_PLUGINS_EXTRA: PROBE,
    'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"`,
  });
  const admin = new AdminClient(url);
  t.equal((await admin.login()).status, 200);
  const publicAgent = async (name: string, fields: Record<string, unknown>) =>
    (await admin.request('POST', '/agents', { name, agent_type: 'chat', public_access_mode: 'public_anonymous', ...fields })).body.agent_id as string;
  const probe = await publicAgent('Probe', { orchestrator_key: 'promise_hooks_probe_v1' });
  const answer = async () => tokensOf((await stream(url, { agent_id: probe, message: 'are they on?' })).events);

  t.equal(await answer(), 'promise hooks off', 'after the administrator requests that set the agent up');

  // An upload whose body has not all come yet: its request runs, in its scope, until the body ends.
  const source = await createSource(admin, { name: 'Held upload' });
  const upload = http.request(`${url}/knowledge-sources/${source.source_id}/documents`, {
    method: 'POST',
    headers: { cookie: admin.cookieHeader('/'), 'content-type': 'multipart/form-data; boundary=probe' },
  });
  const uploaded = new Promise<number>((resolve, reject) => upload.on('response', (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject));
  upload.write('--probe\r\ncontent-disposition: form-data; name="file"; filename="held.txt"\r\ncontent-type: text/plain\r\n\r\nThe first words');
  t.equal(
    await eventually(async () => ((await answer()) === 'promise hooks on' ? 'on' : undefined), 'a turn beside the held upload'),
    'on',
    'on while the upload is received',
  );
  upload.end(' and the last.\r\n--probe--\r\n');
  t.equal(await uploaded, 201, 'the upload is stored');
  t.equal(await answer(), 'promise hooks off', 'off again once it ended');

  // What a turn logs names its request by hand: a failed model call's line carries the request, trace and turn.
  const failing = await publicAgent('Model down', { model_provider: 'openai', model_name: 'gpt-4o-mini' });
  const failed = await stream(url, { agent_id: failing, message: 'hello' }, { 'x-request-id': 'req-scope-model-down' });
  t.match(failed.events, [{ type: 'error', code: 'MODEL_FAILED' }, { type: 'done' }], 'the model failed');
  const line = await eventually(
    () =>
      run
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'model request failed'),
    'the failed call in the log',
  );
  t.match(line, { req_id: 'req-scope-model-down', trace_id: String, turn_id: String, provider: 'openai' }, 'the turn names its request');
});
