import http from 'node:http';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { BadRequestError, NotFoundError, UpstreamTimeoutError } from '@agent-host/sdk';
import t from 'tap';
import { createHttpClient } from '../../core/src/services/http-client.js';
import { pipPackageOf } from '../../core/src/infra/process/pip-venv.js';
import { HealthRegistry } from '../../core/src/services/health.js';
import { createLocalObjectStore } from '../../core/src/services/object-store-local.js';
import { createSecrets, parseSecretsKey, resolveSecretsKey } from '../../core/src/services/secrets.js';
import { estimateTokens } from '../../core/src/usage/token-estimate.js';

t.test('secrets: AES-256-GCM round trip, fresh IV each time, tampering detected', async (t) => {
  const secrets = createSecrets(parseSecretsKey(Buffer.alloc(32, 7).toString('base64')));
  const a = secrets.encrypt('token-123');
  const b = secrets.encrypt('token-123');
  t.not(a, b, 'the same plaintext encrypts differently each time');
  t.notMatch(a, /token-123/, 'the ciphertext does not contain the plaintext');
  t.equal(secrets.decrypt(a), 'token-123');
  const [v, iv, tag, data] = a.split(':');
  const flipped = [v, iv, tag, data!.slice(0, -2) + (data!.endsWith('A') ? 'BB' : 'AA')].join(':');
  t.throws(() => secrets.decrypt(flipped), 'a modified ciphertext is refused');
  const other = createSecrets(parseSecretsKey(Buffer.alloc(32, 8).toString('base64')));
  t.throws(() => other.decrypt(a), 'another key cannot decrypt');
  t.throws(() => parseSecretsKey('c2hvcnQ='), /32 bytes/, 'a short key is refused');
});

t.test('secrets: outside production the key is generated once into the data dir and reused', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-secrets-'));
  const first = resolveSecretsKey('', dir);
  const second = resolveSecretsKey('', dir);
  t.same(first, second, 'restarts keep the same key, so stored secrets stay readable');
  t.equal(Buffer.from((await readFile(path.join(dir, 'secrets.key'), 'utf8')).trim(), 'base64').length, 32);
});

t.test('local object store keeps bytes and content type and never leaves its directory', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-objects-'));
  const store = createLocalObjectStore(dir);
  const info = await store.put('sources/s1/report.pdf', new Uint8Array([1, 2, 3]), { contentType: 'application/pdf' });
  t.same(info, { key: 'sources/s1/report.pdf', size: 3, content_type: 'application/pdf' });
  const got = await store.get('sources/s1/report.pdf');
  t.same([...got.data], [1, 2, 3]);
  t.equal(got.info.content_type, 'application/pdf');
  t.equal(await store.exists('sources/s1/report.pdf'), true);
  t.same(await store.describeDownload('sources/s1/report.pdf'), {
    download_url: '/object-store/objects/sources/s1/report.pdf',
    download_mode: 'object_store_proxy',
    download_warning: 'the local object store has no public endpoint; the file is served through the host',
  });
  const opened = await store.open('sources/s1/report.pdf');
  const chunks: Uint8Array[] = [];
  for await (const chunk of opened.body) chunks.push(chunk);
  t.same([...Buffer.concat(chunks)], [1, 2, 3], 'open streams the same bytes');
  t.equal(opened.info.size, 3);
  await t.rejects(store.open('sources/s1'), NotFoundError, 'a key naming a directory is no object');
  t.equal(await store.exists('sources/s1'), false);
  for (const key of ['../escape', '/etc/passwd', 'a/../../b', '', 'x.meta.json', '..\\escape', 'a\\b', 'a//b', './a', 'a/\u0000']) {
    await t.rejects(store.get(key), BadRequestError, `key ${JSON.stringify(key)} is refused`);
  }
  await store.delete('sources/s1/report.pdf');
  t.equal(await store.exists('sources/s1/report.pdf'), false);
  await t.rejects(store.get('sources/s1/report.pdf'), NotFoundError);
});

t.test('local object store: putStream writes beside the target and renames, and refuses a stream of the wrong size', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-objects-'));
  const store = createLocalObjectStore(dir);
  async function* parts(...texts: string[]) {
    for (const text of texts) yield new TextEncoder().encode(text);
  }
  t.same(await store.putStream!('up/a.txt', parts('one ', 'two'), { contentType: 'text/plain', size: 7 }), {
    key: 'up/a.txt',
    size: 7,
    content_type: 'text/plain',
  });
  t.equal(Buffer.from((await store.get('up/a.txt')).data).toString(), 'one two');
  await t.rejects(store.putStream!('up/b.txt', parts('short'), { contentType: 'text/plain', size: 99 }), /5 bytes arrived, 99 were announced/);
  t.equal(await store.exists('up/b.txt'), false, 'nothing is left under the key');
  t.same((await readdir(path.join(dir, 'up'))).sort(), ['a.txt', 'a.txt.meta.json'], 'and no partial file beside it');
});

/** A local HTTP server for the test, closed with it; its base URL. */
async function serve(t: { teardown(fn: () => Promise<void>): void }, handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

t.test('http client: every call has a timeout that rejects with UpstreamTimeoutError', async (t) => {
  const url = `${await serve(t, (_req, res) => setTimeout(() => res.end('late'), 500))}/`;
  const client = createHttpClient(100, { allowedPrivateHosts: ['127.0.0.1'], maxResponseBytes: 1024, maxRedirects: 0 });
  await t.rejects(client.fetch(url), UpstreamTimeoutError, 'the default timeout applies');
  const response = await client.fetch(url, { timeoutMs: 2000 });
  t.equal(await response.text(), 'late', 'a per-call timeout overrides the default');
  await t.rejects(client.fetchUntrusted(url), UpstreamTimeoutError, 'and to guarded fetches');
  await t.rejects(client.request(url), UpstreamTimeoutError, 'and to requests');
});

t.test('http client request: a Node-stream body, redirects followed as fetch follows them, aborts with the reason', async (t) => {
  const seen: string[] = [];
  const base = await serve(t, (req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      seen.push(`${req.method} ${req.url} ${req.headers['content-type']} ${body}`);
      if (req.url === '/moved') return res.writeHead(307, { location: '/stream' }).end();
      if (req.url === '/hang') return res.writeHead(200).write('first');
      res.writeHead(201, { 'content-type': 'text/event-stream', 'set-cookie': ['a=1', 'b=2'] });
      res.write('data: one\n\n');
      setTimeout(() => res.end('data: two\n\n'), 20);
    });
  });
  const client = createHttpClient(2_000, { allowedPrivateHosts: [], maxResponseBytes: 1024, maxRedirects: 0 });

  const response = await client.request(`${base}/moved`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":1}' });
  t.match(response, { status: 201, url: `${base}/moved` });
  t.equal(response.headers.get('content-type'), 'text/event-stream');
  t.equal(response.headers.get('set-cookie'), 'a=1, b=2', 'a repeated header keeps every value');
  const chunks: string[] = [];
  for await (const chunk of response.body) chunks.push(String(chunk));
  t.same(chunks, ['data: one\n\n', 'data: two\n\n'], 'the body arrives chunk by chunk, as the server sends it');
  t.same(seen, ['POST /moved application/json {"q":1}', 'POST /stream application/json {"q":1}'], 'a 307 is followed with the same method and body');

  const controller = new AbortController();
  const hanging = await client.request(`${base}/hang`, { signal: controller.signal });
  const reason = new Error('the turn was cancelled');
  controller.abort(reason);
  await t.rejects(hanging.body.text(), reason, 'an abort while the body streams rejects with the signal’s reason');
  await t.rejects(client.request(`${base}/stream`, { signal: controller.signal }), reason, 'and so does a request on an aborted signal');
});

t.test('health registry: failing, throwing and hanging checks are reported, not fatal', async (t) => {
  const health = new HealthRegistry();
  health.add('fine', async () => ({ state: 'ok' }));
  health.forOwner('my-plugin').register('upstream', async () => ({ state: 'warning', message: 'slow' }));
  health.add('broken', async () => {
    throw new Error('boom');
  });
  health.add('hangs', () => new Promise(() => undefined));
  const results = Object.fromEntries((await health.run(100)).map((r) => [r.name, r.result]));
  t.same(results, {
    fine: { state: 'ok' },
    'my-plugin.upstream': { state: 'warning', message: 'slow' },
    broken: { state: 'failed', message: 'boom' },
    hangs: { state: 'failed', message: 'health check timed out after 100 ms' },
  });
});

t.test('token estimates are local and offline', async (t) => {
  t.equal(estimateTokens(''), 0);
  const n = estimateTokens('The quick brown fox jumps over the lazy dog.');
  t.ok(n !== undefined && n >= 9 && n <= 12, `a short sentence is about ten tokens (got ${n})`);
});

t.test('the Chroma install reports which package pip is fetching', async (t) => {
  t.equal(pipPackageOf('Collecting onnxruntime>=1.14.1 (from chromadb==1.5.9)'), 'onnxruntime');
  t.equal(pipPackageOf('  Downloading tokenizers-0.21.1-cp39-abi3-manylinux.whl (3.0 MB)'), 'tokenizers-0.21.1-cp39-abi3-manylinux.whl');
  t.equal(pipPackageOf('Requirement already satisfied: numpy'), undefined, 'other lines say nothing');
});
