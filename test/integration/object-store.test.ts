// The object store behind coreServices.objectStore: the backend chosen by
// `[object_store] backend` (local by default, `s3` from plugins/object-store-s3)
// and the same-origin download proxy GET /object-store/objects/*, which never
// serves a path outside the store.
import http from 'node:http';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ConfigError, DEFAULT_CONFIG_DIR, loadConfig } from '@agent-host/core';
import type { RunningHost } from '@agent-host/host';
import t from 'tap';
import { SelectedObjectStore } from '../../core/src/services/object-store-selection.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, uploadOk } from '../helpers/knowledge.js';
import { S3_ACCESS_KEY, startS3Server, type S3Server } from '../helpers/s3-server.js';

type Test = Parameters<Parameters<typeof t.test>[1]>[0];

const SECRET = 'outside-the-store: do not serve';

/** GET with the path sent exactly as written (fetch would resolve `..` first), as the logged-in admin. */
function rawGet(
  host: RunningHost,
  admin: AdminClient | undefined,
  pathname: string,
): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  const cookie = admin?.cookieHeader(pathname) ?? '';
  const { hostname, port } = new URL(host.url);
  return new Promise((resolve, reject) => {
    http
      .get({ hostname, port, path: pathname, headers: cookie ? { cookie } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString(), headers: res.headers }));
      })
      .on('error', reject);
  });
}

async function loggedIn(t: Test, host: RunningHost): Promise<AdminClient> {
  const admin = new AdminClient(host.url);
  t.equal((await admin.login()).status, 200, 'the bootstrap administrator logs in');
  return admin;
}

/** Requests that aim outside the store, plain and encoded; none may answer the secret beside the store. */
const ESCAPES = [
  '/object-store/objects/../secret.txt',
  '/object-store/objects/docs/../../secret.txt',
  '/object-store/objects/%2e%2e/secret.txt',
  '/object-store/objects/%2E%2E%2Fsecret.txt',
  '/object-store/objects/docs/%2e%2e%2f%2e%2e%2fsecret.txt',
  '/object-store/objects/..%5csecret.txt',
  '/object-store/objects/docs%5c..%5c..%5csecret.txt',
  '/object-store/objects//etc/passwd',
  '/object-store/objects/%2Fetc%2Fpasswd',
  '/object-store/objects/%00secret.txt',
  '/object-store/objects/%zz',
];

async function checkEscapesRefused(t: Test, host: RunningHost, admin: AdminClient) {
  for (const escape of ESCAPES) {
    const response = await rawGet(host, admin, escape);
    t.ok([400, 404].includes(response.status), `${escape} is refused (${response.status})`);
    t.notMatch(response.body, SECRET, `${escape} does not serve the file beside the store`);
  }
}

t.test('local store: the proxy streams an object with its type and an attachment disposition', async (t) => {
  const host = await startTestHost(t);
  await writeFile(path.join(host.app.dataDir, 'secret.txt'), SECRET); // the local store is data_dir/objects
  const store = host.app.objectStore;
  await store.put('docs/q3 report/résumé.pdf', new TextEncoder().encode('%PDF-1.7 local'), { contentType: 'application/pdf' });
  const download = await store.describeDownload('docs/q3 report/résumé.pdf');
  t.same(download, {
    download_url: '/object-store/objects/docs/q3%20report/r%C3%A9sum%C3%A9.pdf',
    download_mode: 'object_store_proxy',
    download_warning: 'the local object store has no public endpoint; the file is served through the host',
  });

  t.equal((await rawGet(host, undefined, download.download_url!)).status, 401, 'the proxy needs an administrator login');
  const admin = await loggedIn(t, host);
  const response = await rawGet(host, admin, download.download_url!);
  t.equal(response.status, 200);
  t.equal(response.body, '%PDF-1.7 local', 'the stored bytes are served');
  t.equal(response.headers['content-type'], 'application/pdf', 'with the stored content type');
  t.equal(response.headers['content-length'], '14');
  t.equal(
    response.headers['content-disposition'],
    `attachment; filename="r_sum_.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf`,
    'as an attachment named after the key',
  );
  t.equal(response.headers['x-content-type-options'], 'nosniff', 'the browser may not sniff another type');

  const missing = await rawGet(host, admin, '/object-store/objects/docs/nothing-here.pdf');
  t.equal(missing.status, 404, 'a missing key is 404');
  t.match(JSON.parse(missing.body).detail, /not found/);
  t.equal((await rawGet(host, admin, '/object-store/objects/docs')).status, 404, 'a key prefix (a directory) is no object');
  await checkEscapesRefused(t, host, admin);
});

t.test('coreServices.objectStore refuses calls until core has selected the backend', async (t) => {
  await t.rejects(new SelectedObjectStore().exists('a'), /selected after every plugin has initialised/);
});

t.test('an unknown backend refuses start-up with one message naming it', async (t) => {
  await t.rejects(startTestHost(t, { env: { AGENT_HOST__OBJECT_STORE__BACKEND: 'ceph' } }), {
    name: 'StartupError',
    message: '[object_store] backend "ceph" is not registered: enable the plugin that provides it, or choose one of "local"',
  });
});

t.test('a public endpoint that is not an http(s) URL is refused by the configuration', async (t) => {
  t.throws(() => loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: { OBJECT_STORE_PUBLIC_ENDPOINT: 'files.example.com' } }), ConfigError);
  t.throws(
    () => loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: { OBJECT_STORE_PUBLIC_ENDPOINT: 'files.example.com' } }),
    /object_store\.public_endpoint: must be empty or an http\(s\) URL/,
  );
});

/** A host on the `s3` backend of the object-store-s3 plugin, keys from the environment variables its config names. */
async function startS3Host(t: Test, server: S3Server, env: Record<string, string> = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-s3-config-'));
  const configFile = path.join(dir, 's3.toml');
  await writeFile(
    configFile,
    `[object_store]
backend = "s3"

[plugins.object-store-s3]
endpoint = "${server.endpoint}"
bucket = "${server.bucket}"
force_path_style = true
access_key_id_env = "TEST_S3_KEY_ID"
secret_access_key_env = "TEST_S3_SECRET"
presign_ttl_seconds = 120
`,
  );
  process.env.TEST_S3_KEY_ID = S3_ACCESS_KEY.accessKeyId;
  process.env.TEST_S3_SECRET = S3_ACCESS_KEY.secretAccessKey;
  t.teardown(() => {
    delete process.env.TEST_S3_KEY_ID;
    delete process.env.TEST_S3_SECRET;
  });
  return startTestHost(t, {
    env: {
      AGENT_HOST_CONFIG: configFile,
      AGENT_HOST__PLUGINS__ENABLED: JSON.stringify(['models-langchain', 'orchestrator-core-chat', 'parsers-local', 'object-store-s3']),
      ...env,
    },
  });
}

t.test('s3 backend without a public endpoint: objects live in the bucket and download through the proxy', async (t) => {
  const server = await startS3Server(t);
  const host = await startS3Host(t, server);
  await writeFile(path.join(host.app.dataDir, 'secret.txt'), SECRET);
  t.same(host.app.kernel.plugins().find((p) => p.id === 'object-store-s3')?.registered, { objectStores: ['s3'] }, 'the plugin registers the s3 backend');
  await host.app.objectStore.put('exports/run 7.csv', new TextEncoder().encode('a,b\n1,2\n'), { contentType: 'text/csv' });
  const direct = new S3Client({ endpoint: server.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: S3_ACCESS_KEY });
  t.teardown(() => direct.destroy());
  const stored = await direct.send(new GetObjectCommand({ Bucket: server.bucket, Key: 'exports/run 7.csv' }));
  t.equal(await stored.Body!.transformToString(), 'a,b\n1,2\n', 'coreServices.objectStore wrote to the bucket');

  const download = await host.app.objectStore.describeDownload('exports/run 7.csv');
  t.same(download, {
    download_url: '/object-store/objects/exports/run%207.csv',
    download_mode: 'object_store_proxy',
    download_warning: 'OBJECT_STORE_PUBLIC_ENDPOINT is not set; the file is served through the host',
  });
  const admin = await loggedIn(t, host);
  const response = await rawGet(host, admin, download.download_url!);
  t.equal(response.status, 200);
  t.equal(response.body, 'a,b\n1,2\n', 'the proxy streams the object from the bucket');
  t.equal(response.headers['content-type'], 'text/csv');
  t.equal(response.headers['content-disposition'], `attachment; filename="run 7.csv"; filename*=UTF-8''run%207.csv`);
  t.equal((await rawGet(host, admin, '/object-store/objects/exports/none.csv')).status, 404, 'a missing key is 404');
  await checkEscapesRefused(t, host, admin);
});

t.test('s3 backend with OBJECT_STORE_PUBLIC_ENDPOINT: downloads are presigned URLs that serve the bytes', async (t) => {
  const server = await startS3Server(t);
  const host = await startS3Host(t, server, { OBJECT_STORE_PUBLIC_ENDPOINT: server.publicEndpoint });
  await host.app.objectStore.put('sources/s1/notes.txt', new TextEncoder().encode('presigned bytes'), { contentType: 'text/plain' });
  const download = await host.app.objectStore.describeDownload('sources/s1/notes.txt');
  t.equal(download.download_mode, 'presigned_url');
  t.equal(download.download_warning, null);
  t.ok(download.download_url!.startsWith(`${server.publicEndpoint}/${server.bucket}/sources/s1/notes.txt?`), 'the URL is on the public endpoint');
  const response = await fetch(download.download_url!);
  t.equal(response.status, 200);
  t.equal(await response.text(), 'presigned bytes', 'the presigned URL downloads the object without the host');

  const admin = await loggedIn(t, host);
  const source = await createSource(admin);
  const page = '<html><body><script>document.title = "uploaded"</script>Opening hours</body></html>';
  const uploaded = await uploadOk(admin, source.source_id, { filename: 'opening hours.html', contentType: 'text/html', data: page });
  const document = await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${uploaded.document_id}`);
  t.match(
    document.body,
    { filename: 'opening hours.html', download_mode: 'presigned_url', download_warning: null },
    'a document in the bucket is offered as a presigned URL',
  );
  t.ok(document.body.download_url.startsWith(`${server.publicEndpoint}/${server.bucket}/`), 'on the public endpoint');
  const file = await fetch(document.body.download_url);
  t.equal(file.status, 200);
  t.equal(await file.text(), page, 'the URL serves the uploaded bytes');
  t.equal(
    file.headers.get('content-disposition'),
    `attachment; filename="opening hours.html"; filename*=UTF-8''opening%20hours.html`,
    'as an attachment with the original filename, not a page on the bucket origin',
  );
});
