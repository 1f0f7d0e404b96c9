// The `s3` object store backend of plugins/object-store-s3 against a real
// S3-compatible server (s3rver, which verifies signatures).
import { S3Client } from '@aws-sdk/client-s3';
import { BadRequestError, NotFoundError } from '@agent-host/sdk';
import t from 'tap';
import { createS3Clients, credentialsFromEnv, type S3ConnectionOptions } from '../src/lib/s3-clients.js';
import { createS3ObjectStore, NO_PUBLIC_ENDPOINT_WARNING, PRESIGN_FAILED_WARNING } from '../src/lib/s3-object-store.js';
import { objectStoreConformance } from '@agent-host/sdk/testing';
import { recordingHttp } from '../../../test/helpers/http-client.js';
import { recordingLogger } from '../../../test/helpers/model-provider.js';
import { S3_ACCESS_KEY, startS3Server, type S3Server } from '../../../test/helpers/s3-server.js';

const KEY_ENV = { TEST_S3_KEY_ID: S3_ACCESS_KEY.accessKeyId, TEST_S3_SECRET: S3_ACCESS_KEY.secretAccessKey };

const connection = (server: S3Server): S3ConnectionOptions => ({
  endpoint: server.endpoint,
  region: 'us-east-1',
  forcePathStyle: true,
  accessKeyIdEnv: 'TEST_S3_KEY_ID',
  secretAccessKeyEnv: 'TEST_S3_SECRET',
});

function storeFor(t: { teardown(fn: () => void): void }, server: S3Server, publicEndpoint = '', log = recordingLogger(), http = recordingHttp()) {
  const { client, publicClient } = createS3Clients(connection(server), publicEndpoint, KEY_ENV, http);
  t.teardown(() => {
    client.destroy();
    publicClient?.destroy();
  });
  return createS3ObjectStore({ client, publicClient, bucket: server.bucket, presignTtlSeconds: 60, log });
}

const bytes = (text: string) => new TextEncoder().encode(text);

t.test('put, get, open, exists and delete round-trip bytes and content type through the bucket', async (t) => {
  const server = await startS3Server(t);
  const http = recordingHttp();
  const store = storeFor(t, server, '', recordingLogger(), http);
  const key = 'sources/s1/rapport été.pdf';
  t.same(await store.put(key, bytes('%PDF-1.7 body'), { contentType: 'application/pdf' }), { key, size: 13, content_type: 'application/pdf' });
  t.equal(await store.exists(key), true, 'a stored key exists');
  const got = await store.get(key);
  t.equal(new TextDecoder().decode(got.data), '%PDF-1.7 body', 'get returns the stored bytes');
  t.same(got.info, { key, size: 13, content_type: 'application/pdf' }, 'get returns size and content type');
  const opened = await store.open(key);
  const chunks: Uint8Array[] = [];
  for await (const chunk of opened.body) chunks.push(chunk);
  t.equal(Buffer.concat(chunks).toString(), '%PDF-1.7 body', 'open streams the stored bytes');
  await store.delete(key);
  t.equal(await store.exists(key), false, 'a deleted key no longer exists');
  await t.rejects(store.get(key), NotFoundError, 'get of a missing key is a NotFoundError');
  await t.rejects(store.open(key), NotFoundError, 'open of a missing key is a NotFoundError');
  await store.delete(key);
  t.pass('deleting a missing key is not an error');
  t.ok(
    http.fetched.length >= 8 && http.fetched.every((url) => url.startsWith(server.endpoint)),
    "every request went through the host's HTTP client (coreServices.http)",
  );
});

t.test('putStream stores bytes read from a stream, announced by their size', async (t) => {
  const store = storeFor(t, await startS3Server(t));
  const parts = ['first part, ', 'second part, ', 'last part'].map(bytes);
  async function* body() {
    yield* parts;
  }
  const size = parts.reduce((total, part) => total + part.byteLength, 0);
  t.same(await store.putStream!('uploads/streamed.txt', body(), { contentType: 'text/plain', size }), {
    key: 'uploads/streamed.txt',
    size,
    content_type: 'text/plain',
  });
  const got = await store.get('uploads/streamed.txt');
  t.equal(new TextDecoder().decode(got.data), 'first part, second part, last part', 'the object holds the streamed bytes');
  t.same(got.info, { key: 'uploads/streamed.txt', size, content_type: 'text/plain' });
});

t.test('with a public endpoint, downloads are presigned URLs that fetch the bytes over HTTP', async (t) => {
  const server = await startS3Server(t);
  const store = storeFor(t, server, server.publicEndpoint);
  const key = 'exports/run 1/result.csv';
  await store.put(key, bytes('a,b\n1,2\n'), { contentType: 'text/csv' });
  const download = await store.describeDownload(key);
  t.equal(download.download_mode, 'presigned_url');
  t.equal(download.download_warning, null, 'a presigned URL carries no warning');
  const url = new URL(download.download_url!);
  t.equal(url.origin, server.publicEndpoint, 'the URL points at the public endpoint, not the one the host uses');
  t.match(url.searchParams.get('X-Amz-Expires'), '60', 'the URL expires after the configured TTL');
  const response = await fetch(url);
  t.equal(response.status, 200, 'the presigned URL downloads without credentials');
  t.equal(await response.text(), 'a,b\n1,2\n', 'it serves the stored bytes');
  t.equal(response.headers.get('content-type'), 'text/csv');
  url.searchParams.set('X-Amz-Signature', '0'.repeat(64));
  t.equal((await fetch(url)).status, 403, 'the server checks the signature: a forged one is refused');
});

t.test('a presigned download is an attachment named after the file, so an uploaded page is never rendered from the bucket', async (t) => {
  const server = await startS3Server(t);
  const store = storeFor(t, server, server.publicEndpoint);
  const key = 'knowledge/s1/d1/page "été".html';
  await store.put(key, bytes('<script>alert(1)</script>'), { contentType: 'text/html' });
  const url = new URL((await store.describeDownload(key)).download_url!);
  const response = await fetch(url);
  t.equal(response.status, 200);
  t.equal(response.headers.get('content-type'), 'text/html', 'the stored type is kept');
  t.equal(
    response.headers.get('content-disposition'),
    `attachment; filename="page __t__.html"; filename*=UTF-8''page%20%22%C3%A9t%C3%A9%22.html`,
    'the bucket answers with an attachment disposition carrying the file name, ASCII and RFC 5987',
  );
  url.searchParams.set('response-content-disposition', 'inline');
  t.equal((await fetch(url)).status, 403, 'the signature covers the query: a URL changed to ask for inline is refused');
});

t.test('without a public endpoint, downloads fall back to the same-origin proxy with a warning', async (t) => {
  const store = storeFor(t, await startS3Server(t));
  t.same(await store.describeDownload('docs/a b/ü.txt'), {
    download_url: '/object-store/objects/docs/a%20b/%C3%BC.txt',
    download_mode: 'object_store_proxy',
    download_warning: NO_PUBLIC_ENDPOINT_WARNING,
  });
});

t.test('when presigning fails, downloads fall back to the proxy and the failure is logged', async (t) => {
  const server = await startS3Server(t);
  const { client } = createS3Clients(connection(server), '', KEY_ENV, recordingHttp());
  const publicClient = new S3Client({
    endpoint: server.publicEndpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: async () => {
      throw new Error('no credentials for signing');
    },
  });
  t.teardown(() => {
    client.destroy();
    publicClient.destroy();
  });
  const log = recordingLogger();
  const store = createS3ObjectStore({ client, publicClient, bucket: server.bucket, presignTtlSeconds: 60, log });
  t.same(await store.describeDownload('docs/a.txt'), {
    download_url: '/object-store/objects/docs/a.txt',
    download_mode: 'object_store_proxy',
    download_warning: PRESIGN_FAILED_WARNING,
  });
  t.equal(log.warnings.length, 1, 'the presign failure is logged for the operator');
});

t.test('keys that could escape the store are refused before any request', async (t) => {
  const server = await startS3Server(t);
  const store = storeFor(t, server, server.publicEndpoint);
  for (const key of ['../escape', 'a/../../b', '/etc/passwd', '..\\escape', 'a\\b', '', 'a//b', './a', 'a/.', 'x\u0000y', 'k'.repeat(1025)]) {
    const name = JSON.stringify(key.length > 40 ? `${key.slice(0, 10)}…` : key);
    await t.rejects(store.put(key, bytes('x'), { contentType: 'text/plain' }), BadRequestError, `put ${name} is refused`);
    await t.rejects(store.get(key), BadRequestError, `get ${name} is refused`);
    await t.rejects(store.describeDownload(key), BadRequestError, `describeDownload ${name} is refused`);
  }
  await t.rejects(store.exists('../x'), BadRequestError);
  await t.rejects(store.delete('../x'), BadRequestError);
  await t.rejects(store.open('../x'), BadRequestError);
});

t.test('credentials come from the named environment variables, both or neither', async (t) => {
  const options = { endpoint: '', region: 'us-east-1', forcePathStyle: false, accessKeyIdEnv: 'ID', secretAccessKeyEnv: 'SECRET' };
  t.same(credentialsFromEnv(options, { ID: 'a', SECRET: 'b' }), { accessKeyId: 'a', secretAccessKey: 'b' });
  t.equal(credentialsFromEnv(options, {}), undefined, 'neither set: the AWS default chain applies');
  t.throws(() => credentialsFromEnv(options, { ID: 'a' }), /set both ID and SECRET, or neither/, 'one without the other is refused');
});

t.test('the s3 backend keeps every rule of the object store conformance suite (@agent-host/sdk/testing)', async (t) => {
  const store = storeFor(t, await startS3Server(t));
  for (const rule of objectStoreConformance(store)) await t.test(rule.rule, async () => rule.check());
});
