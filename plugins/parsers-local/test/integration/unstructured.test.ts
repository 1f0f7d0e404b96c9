// parsers-local with an Unstructured API configured, against a fixture that
// speaks the partition endpoint's protocol (test/fixtures/unstructured-server.ts):
// the request on the wire, the mapping of elements, which content types it
// takes over from the local parsers, and its failures.
import { BadRequestError, extensionPoints, UpstreamError, UpstreamTimeoutError, type DocumentParser } from '@agent-host/sdk';
import t from 'tap';
import { elementsOf, startUnstructuredFixture, type Respond, type UnstructuredFixture } from '../../../../test/fixtures/unstructured-server.js';
import { loadFirstPartyPlugin } from '../../../../test/helpers/first-party-plugin.js';
import { recordingHttp } from '../../../../test/helpers/http-client.js';
import { AdminClient, startTestHost } from '../../../../test/helpers/host.js';
import { createSource, ingest, uploadOk } from '../../../../test/helpers/knowledge.js';
import { query } from '../../../../test/helpers/services.js';

const KEY_ENV = 'TEST_UNSTRUCTURED_API_KEY';

async function fixture(t: { teardown(fn: () => Promise<void>): void }, options: { respond?: Respond; apiKey?: string } = {}): Promise<UnstructuredFixture> {
  const server = await startUnstructuredFixture(options);
  t.teardown(() => server.close());
  return server;
}

async function parsersWith(config: Record<string, unknown>, http = recordingHttp()) {
  const kernel = await loadFirstPartyPlugin('parsers-local', { unstructured_api_key_env: KEY_ENV, ...config }, { 'core.http': http });
  const registry = kernel.registry(extensionPoints.documentParsers);
  return (contentType: string): DocumentParser => {
    const parser = registry.get(contentType);
    if (!parser) throw new Error(`no parser for ${contentType}`);
    return parser;
  };
}

const input = (text: string, filename = 'notes.txt', contentType = 'text/plain') => ({ data: new TextEncoder().encode(text), filename, contentType });
const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

t.test('a document goes to POST /general/v0/general as multipart, with the strategy, content type and API key', async (t) => {
  const server = await fixture(t, { apiKey: 'sk-unstructured' });
  process.env[KEY_ENV] = 'sk-unstructured';
  t.teardown(() => void delete process.env[KEY_ENV]);
  const http = recordingHttp();
  const parserFor = await parsersWith({ unstructured_api_url: server.url, unstructured_strategy: 'hi_res' }, http);
  const doc = await parserFor('text/plain').parse(input('Refund policy\n\nRefunds take five days.'));
  t.same(http.fetched, [`${server.url}/general/v0/general`], "the request went through the host's HTTP client (coreServices.http)");
  const [request] = server.requests;
  t.equal(request?.file?.name, 'notes.txt', 'the file part carries the original filename');
  t.equal(request?.file?.data.toString('utf8'), 'Refund policy\n\nRefunds take five days.', 'the file part carries the document bytes unchanged');
  t.match(request?.fields, { strategy: 'hi_res', content_type: 'text/plain' }, 'the configured strategy and the content type go as form fields');
  t.equal(request?.headers['unstructured-api-key'], 'sk-unstructured', 'the key is read from the configured variable and sent in unstructured-api-key');
  t.same(
    doc.elements.map((e) => [e.type, e.text]),
    [
      ['Title', 'Refund policy'],
      ['NarrativeText', 'Refunds take five days.'],
    ],
    'the API’s elements become the parse, in order',
  );
  t.match(doc.metadata, { parser: 'unstructured', strategy: 'hi_res' }, 'the snapshot records that Unstructured parsed it');
});

t.test('element metadata keeps page numbers, depth and ids, drops bulky fields, and gains the heading trail', async (t) => {
  const server = await fixture(t, {
    respond: (request) => ({
      elements: elementsOf(request, [
        { type: 'Title', text: 'Handbook', metadata: { category_depth: 0 } },
        { type: 'Title', text: 'Leave', metadata: { category_depth: 1, page_number: 2 } },
        { type: 'NarrativeText', text: 'Twenty-five days a year.', metadata: { page_number: 2, coordinates: { points: [[0, 0]] }, image_base64: 'AAAA' } },
        { type: 'PageBreak', text: '' },
      ]),
    }),
  });
  const parserFor = await parsersWith({ unstructured_api_url: server.url });
  const doc = await parserFor('application/pdf').parse(input('%PDF-1.4 ...', 'handbook.pdf', 'application/pdf'));
  const body = doc.elements[2]!;
  t.equal(body.metadata?.page_number, 2, 'page_number is kept');
  t.same(body.metadata?.headings, ['Handbook', 'Leave'], 'headings are derived from the Titles’ category_depth');
  t.type(body.metadata?.element_id, 'string', 'the element id is kept');
  t.notOk(
    'coordinates' in body.metadata! || 'image_base64' in body.metadata! || 'filename' in body.metadata!,
    'coordinates, images and the filename are dropped',
  );
  t.equal(doc.elements.length, 3, 'elements without text (page breaks) are dropped');
});

t.test('with a URL configured, Unstructured takes the content types it is given and the local parsers keep the rest', async (t) => {
  const server = await fixture(t);
  const parserFor = await parsersWith({ unstructured_api_url: server.url, unstructured_content_types: ['text/plain', 'image/png'] });
  await parserFor('text/plain').parse(input('Sent to the API.'));
  await parserFor('image/png').parse(input('not really a png', 'scan.png', 'image/png'));
  t.equal(server.requests.length, 2, 'text/plain and image/png (a type only Unstructured reads) went to the API');
  const csv = await parserFor('text/csv').parse(input('a,b\n1,2\n', 'x.csv', 'text/csv'));
  t.equal(server.requests.length, 2, 'text/csv, not in the list, was parsed locally without a request');
  t.equal(csv.metadata.parser, 'local-csv', 'the local CSV parser answered');
});

t.test('by default every local content type goes to Unstructured once it is configured', async (t) => {
  const server = await fixture(t);
  const parserFor = await parsersWith({ unstructured_api_url: `${server.url}/general/v0/general` });
  for (const type of ['application/pdf', 'text/html', 'text/markdown', 'text/csv', 'text/plain']) await parserFor(type).parse(input('x', 'f', type));
  t.equal(server.requests.length, 5, 'each of them was sent to the API');
  t.ok(
    server.requests.every((r) => r.file),
    'a URL quoted with /general/v0/general (as Unstructured documents it) reaches the same endpoint',
  );
});

t.test('a document the API rejects (400, 422) is a 400 carrying the API’s detail; nothing is retried', async (t) => {
  const server = await fixture(t, { respond: () => ({ status: 400, detail: 'File type application/x-odd is not supported.' }) });
  const parserFor = await parsersWith({ unstructured_api_url: server.url });
  const error = await rejection(parserFor('text/plain').parse(input('x', 'odd.bin')));
  t.type(error, BadRequestError, 'the document is at fault, so the caller gets a 4xx');
  t.match(
    (error as Error).message,
    /refused odd\.bin \(400\): File type application\/x-odd is not supported\./,
    'the message names the file, the status and the API’s detail',
  );
  server.setRespond(() => ({ status: 422, detail: [{ loc: ['body', 'strategy'], msg: 'bad strategy', type: 'value_error' }] }));
  const invalid = await rejection(parserFor('text/plain').parse(input('x')));
  t.match((invalid as Error).message, /\(422\).*bad strategy/, 'a validation list is passed on as JSON');
  t.equal(server.requests.length, 2, 'one request per parse: no retries');
});

t.test('a wrong API key is an upstream error that says so', async (t) => {
  const server = await fixture(t, { apiKey: 'the-right-key' });
  const parserFor = await parsersWith({ unstructured_api_url: server.url });
  const error = await rejection(parserFor('text/plain').parse(input('x')));
  t.type(error, UpstreamError, 'a refused key is an upstream fault');
  t.match(
    (error as Error).message,
    /refused the API key \(401\): API key is invalid or missing/,
    'the message says the key was refused, with the API’s detail',
  );
});

t.test('a server error is an upstream error with the API’s detail, tried once, and nothing is printed', async (t) => {
  const server = await fixture(t, { respond: () => ({ status: 500, detail: 'partition worker crashed' }) });
  const parserFor = await parsersWith({ unstructured_api_url: server.url });
  const printed: unknown[] = [];
  const saved = { error: console.error, warn: console.warn, info: console.info };
  console.error = console.warn = console.info = (...args: unknown[]) => void printed.push(args);
  const error = await rejection(parserFor('text/plain').parse(input('x'))).finally(() => Object.assign(console, saved));
  t.same(printed, [], 'the client’s console-logging hooks are off: failures reach the host as errors only');
  t.type(error, UpstreamError, 'a server error is an upstream fault');
  t.match((error as Error).message, /failed \(500\): partition worker crashed/, 'the message carries the status and the API’s detail');
  t.equal(server.requests.length, 1, 'the client’s own 5xx retries are off; the ingestion job decides about retrying');
});

t.test('a partition slower than unstructured_timeout_seconds is an UpstreamTimeoutError', async (t) => {
  const server = await fixture(t, { respond: () => ({ delayMs: 2_000, elements: [] }) });
  const parserFor = await parsersWith({ unstructured_api_url: server.url, unstructured_timeout_seconds: 0.2 });
  const started = Date.now();
  const error = await rejection(parserFor('text/plain').parse(input('x')));
  t.type(error, UpstreamTimeoutError, 'the deadline is an UpstreamTimeoutError');
  t.ok(Date.now() - started < 1_500, 'it fails at the deadline, not when the server finally answers');
});

t.test('an unreachable API is an upstream error naming the URL', async (t) => {
  const server = await fixture(t);
  await server.close();
  const parserFor = await parsersWith({ unstructured_api_url: server.url });
  const error = await rejection(parserFor('text/plain').parse(input('x')));
  t.type(error, UpstreamError, 'an unreachable API is an upstream fault');
  t.match((error as Error).message, `cannot reach the Unstructured API at ${server.url}`);
});

t.test('aborting the signal ends a partition in flight with the abort reason', async (t) => {
  const server = await fixture(t, { respond: () => ({ delayMs: 3_000, elements: [] }) });
  const parserFor = await parsersWith({ unstructured_api_url: server.url });
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('ingestion cancelled')), 100);
  const started = Date.now();
  const error = await rejection(parserFor('text/plain').parse(input('x'), { signal: controller.signal }));
  t.match(error, { message: 'ingestion cancelled' }, 'the caller gets its own abort reason back');
  t.ok(Date.now() - started < 1_500, 'without waiting for the server');
});

t.test('a host with an Unstructured API URL configured ingests a document through it', async (t) => {
  // Elements the local text parser could not produce from the bytes: what reaches the chunks shows who parsed.
  const server = await fixture(t, {
    respond: (request) => ({
      elements: elementsOf(request, [
        { type: 'Title', text: 'Scanned refund policy' },
        { type: 'NarrativeText', text: 'Refunds are paid within five working days, as read by Unstructured.' },
      ]),
    }),
  });
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__PARSERS-LOCAL__UNSTRUCTURED_API_URL': JSON.stringify(server.url) } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin);
  const doc = await uploadOk(admin, source.source_id, { filename: 'policy.txt', contentType: 'text/plain', data: 'raw bytes of a scan' });
  const job = await ingest(admin, source.source_id);
  t.equal(job.status, 'succeeded', 'the ingestion job succeeds');
  t.equal(server.requests.length, 1, 'the document was sent to the Unstructured API once');
  t.equal(server.requests[0]?.file?.name, 'policy.txt', 'with its original filename');
  t.equal(server.requests[0]?.file?.data.toString('utf8'), 'raw bytes of a scan', 'and its stored bytes');
  const [snapshot] = await query<{ metadata: Record<string, unknown> }>(
    host.databaseUrl,
    'SELECT metadata FROM knowledge_parse_snapshots WHERE document_id = $1',
    [doc.document_id],
  );
  t.match(snapshot?.metadata, { parser: 'unstructured' }, 'the parse snapshot records that Unstructured parsed it');
  const chunks = await query<{ content: string }>(host.databaseUrl, 'SELECT content FROM knowledge_chunks WHERE document_id = $1 ORDER BY chunk_index', [
    doc.document_id,
  ]);
  t.match(
    chunks.map((c) => c.content).join('\n'),
    /Refunds are paid within five working days, as read by Unstructured/,
    'the chunks hold the text of the API’s elements',
  );
  t.notMatch(chunks.map((c) => c.content).join('\n'), /raw bytes of a scan/, 'not the bytes read locally');
  const indexed = (await admin.request('GET', `/knowledge-sources/${source.source_id}/documents/${doc.document_id}`)).body;
  t.match(indexed, { status: 'indexed', vector_status: 'indexed', actual_point_count: chunks.length }, 'and the document is indexed with one point per chunk');
});
