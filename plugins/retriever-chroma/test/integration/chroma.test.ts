// The `chroma` retriever of the retriever-chroma plugin against the real
// Chroma server the harness starts (TEST_CHROMA_URL): collections made on
// demand in cosine space, similarity scores in [0, 1], filters, deletes,
// counts, dimension checks and failures.
import { randomBytes } from 'node:crypto';
import { BadRequestError, ConflictError, extensionPoints, UpstreamError, type Retriever, type VectorPoint } from '@agent-host/sdk';
import { ChromaClient } from 'chromadb';
import t from 'tap';
import { retrieverConformance } from '@agent-host/sdk/testing';
import { loadFirstPartyPlugin } from '../../../../test/helpers/first-party-plugin.js';
import { recordingHttp } from '../../../../test/helpers/http-client.js';
import { chromaUrl } from '../../../../test/helpers/services.js';

const url = new URL(chromaUrl());
const chroma = new ChromaClient({ host: url.hostname, port: Number(url.port) });

/** A host config service whose `[chroma]` section holds `chromaSectionUrl`. */
const hostConfig = (chromaSectionUrl: string) => ({ appEnv: 'test', section: (name: string) => (name === 'chroma' ? { url: chromaSectionUrl } : undefined) });

async function retriever(options: { pluginUrl?: string; hostUrl?: string } = {}): Promise<Retriever> {
  const kernel = await loadFirstPartyPlugin('retriever-chroma', options.pluginUrl ? { url: options.pluginUrl } : {}, {
    'core.config': hostConfig(options.hostUrl ?? chromaUrl()),
  });
  return kernel.registry(extensionPoints.retrievers).get('chroma')!;
}

/** A fresh collection name, deleted when the test ends. */
function collectionFor(t: { teardown(fn: () => Promise<void>): void }): string {
  const name = `test_${randomBytes(6).toString('hex')}`;
  t.teardown(() => chroma.deleteCollection({ name }).catch(() => undefined));
  return name;
}

const exists = (name: string) =>
  chroma.getCollection({ name }).then(
    () => true,
    () => false,
  );

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

const point = (id: string, vector: number[], metadata: VectorPoint['metadata'] = {}): VectorPoint => ({ id, vector, document: `text of ${id}`, metadata });

const store = await retriever();

t.test('the plugin registers the chroma retriever', async (t) => {
  const kernel = await loadFirstPartyPlugin('retriever-chroma', {}, { 'core.config': hostConfig(chromaUrl()) });
  t.same(kernel.plugins()[0]?.registered.retrievers, ['chroma'], 'the retriever is registered under chroma');
});

t.test('the first upsert creates the collection in cosine space, tagged with the vector length', async (t) => {
  const name = collectionFor(t);
  t.notOk(await exists(name), 'the collection does not exist before');
  await store.upsert(name, [point('a', [1, 0, 0])]);
  const collection = await chroma.getCollection({ name });
  t.equal(collection.configuration.hnsw?.space, 'cosine', 'the HNSW space is cosine');
  t.equal(collection.metadata?.agent_host_dim, 3, 'the collection records the dimension');
});

t.test('query returns the topK nearest with cosine similarity scores in [0, 1], best first', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [
    point('same', [1, 0, 0], { doc: 'd1', page: 1 }),
    point('near', [1, 1, 0], { doc: 'd1', page: 2 }),
    point('orthogonal', [0, 0, 1], { doc: 'd2', page: 1 }),
    point('opposite', [-1, 0, 0], { doc: 'd2', page: 2 }),
  ]);
  const hits = await store.query(name, { vector: [2, 0, 0], topK: 4 });
  t.same(
    hits.map((h) => h.id),
    ['same', 'near', 'orthogonal', 'opposite'],
    'ordered by similarity',
  );
  t.ok(Math.abs(hits[0]!.score - 1) < 1e-3, 'the same direction scores 1, whatever the length');
  t.ok(Math.abs(hits[1]!.score - Math.SQRT1_2) < 1e-3, 'a 45° angle scores its cosine');
  t.ok(hits[2]!.score < 1e-3 && hits[3]!.score === 0, 'orthogonal scores 0, and opposite is floored at 0');
  t.ok(
    hits.every((h) => h.score >= 0 && h.score <= 1),
    'every score lies in [0, 1]',
  );
  t.same(
    hits[1],
    { id: 'near', score: hits[1]!.score, document: 'text of near', metadata: { doc: 'd1', page: 2 } },
    'hits carry the stored document and metadata',
  );
  t.equal((await store.query(name, { vector: [1, 0, 0], topK: 2 })).length, 2, 'topK limits the hits');
});

t.test('where filters by equality per key, arrays meaning one of, all keys at once', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [
    point('a', [1, 0], { doc: 'd1', lang: 'en' }),
    point('b', [1, 0.1], { doc: 'd2', lang: 'en' }),
    point('c', [1, 0.2], { doc: 'd3', lang: 'de' }),
  ]);
  const ids = async (where: Record<string, string | string[]>) => (await store.query(name, { vector: [1, 0], topK: 10, where })).map((h) => h.id).sort();
  t.same(await ids({ doc: 'd2' }), ['b'], 'equality');
  t.same(await ids({ doc: ['d1', 'd3'] }), ['a', 'c'], 'an array means one of');
  t.same(await ids({ lang: 'en', doc: ['d2', 'd3'] }), ['b'], 'several keys must all match');
  t.equal(await store.count(name, { lang: 'en' }), 2, 'count takes the same filter');
  t.equal(await store.count(name), 3, 'count without a filter counts every point');
});

t.test('upsert replaces points with the same id', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [point('a', [1, 0], { v: 1 })]);
  await store.upsert(name, [{ id: 'a', vector: [0, 1], document: 'new text', metadata: { v: 2 } }]);
  t.equal(await store.count(name), 1, 'still one point');
  const [hit] = await store.query(name, { vector: [0, 1], topK: 1 });
  t.same([hit?.document, hit?.metadata, Math.round(hit!.score)], ['new text', { v: 2 }, 1], 'vector, document and metadata are the new ones');
  const twice = await rejection(store.upsert(name, [point('b', [1, 0]), point('b', [0, 1])]));
  t.type(twice, BadRequestError, 'one id twice in one upsert is refused');
  t.match((twice as Error).message, /point "b" appears more than once/, 'naming the id');
  t.equal(await store.count(name), 1, 'and nothing was stored');
});

t.test('upserted vectors are stored as their float32 values, packed without the client’s byte-at-a-time base64', async (t) => {
  const name = collectionFor(t);
  const vectors = Array.from({ length: 3 }, (_, i) => Array.from({ length: 512 }, (_, j) => Math.sin(i * 512 + j) / (j + 1)));
  const { btoa } = globalThis;
  let packedByBtoa = 0;
  globalThis.btoa = (data) => (packedByBtoa++, btoa(data));
  t.teardown(() => void (globalThis.btoa = btoa));
  await store.upsert(
    name,
    vectors.map((vector, i) => point(`v${i}`, vector)),
  );
  t.equal(packedByBtoa, 0, 'no vector went through btoa (the chromadb client packs one with a string per byte)');
  const stored = await (await chroma.getCollection({ name })).get({ ids: ['v0', 'v1', 'v2'], include: ['embeddings'] });
  t.same(stored.ids, ['v0', 'v1', 'v2'], 'every point was stored');
  // Chroma writes a float32 in eight significant digits, which read back may differ from it in the last bit.
  const worst = Math.max(...vectors.flatMap((vector, i) => vector.map((x, j) => Math.abs(stored.embeddings[i]![j]! - x) / Math.abs(x || 1))));
  t.ok(worst < 1e-6, `each component reads back as given, to float32 precision (worst relative error ${worst})`);
});

t.test("upserts and queries go through the host's HTTP client, queries of many vectors in one request", async (t) => {
  const http = recordingHttp();
  const kernel = await loadFirstPartyPlugin('retriever-chroma', {}, { 'core.config': hostConfig(chromaUrl()), 'core.http': http });
  const own = kernel.registry(extensionPoints.retrievers).get('chroma')!;
  const name = collectionFor(t);
  await own.upsert(name, [point('a', [1, 0], { name: 'a' }), point('b', [0, 1], { name: 'b' })]);
  const vectors = [
    [0, 1],
    [1, 0],
    [1, 0.1],
  ];
  const hits = await own.queryMany!(name, { vectors, topK: 1 });
  t.same(
    hits.map((h) => h.map((hit) => [hit.id, hit.metadata])),
    [[['b', { name: 'b' }]], [['a', { name: 'a' }]], [['a', { name: 'a' }]]],
    'each vector gets its nearest point, with its metadata',
  );
  const [[bare]] = await own.queryMany!(name, { vectors: [[0, 1]], topK: 1, documents: false, metadata: false });
  t.same(bare, { id: 'b', score: 1, document: '', metadata: {} }, 'with documents and metadata false, Chroma is asked for neither');
  t.same(
    http.fetched.map((url) => url.split('/').at(-1)),
    ['upsert', 'query', 'query'],
    "the upsert and each query's vectors were one request each, through coreServices.http",
  );
});

t.test('points upserted with empty documents (the host’s) are stored without one, and read back with ""', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [
    { ...point('a', [1, 0]), document: '' },
    { ...point('b', [0, 1]), document: '' },
  ]);
  const documents = async (ids: string[]) => {
    const got = await (await chroma.getCollection({ name })).get({ ids, include: ['documents'] });
    return Object.fromEntries(got.ids.map((id, i) => [id, got.documents[i]]));
  };
  t.same(await documents(['a', 'b']), { a: null, b: null }, 'Chroma holds no document for either point');
  const [hit] = await store.query(name, { vector: [1, 0], topK: 1 });
  t.same([hit?.id, hit?.document], ['a', ''], 'the hit reads back an empty document');
  await store.upsert(name, [{ ...point('c', [1, 1]), document: '' }, point('d', [1, -1])]);
  t.same(await documents(['c', 'd']), { c: '', d: 'text of d' }, 'a batch where some point has text stores every document as given');
  const [withText] = await store.query(name, { vector: [1, -1], topK: 1 });
  const [withoutText] = await store.query(name, { vector: [1, -1], topK: 1, documents: false });
  t.same([withText?.id, withText?.document], ['d', 'text of d'], 'a query reads the documents by default');
  t.same(
    [withoutText?.id, withoutText?.document, withoutText?.score],
    ['d', '', withText?.score],
    'documents: false leaves them out (the host reads the text from Postgres), the same hit otherwise',
  );
});

t.test('metadata keys set to null are not stored, and a point without metadata reads back {}', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [point('a', [1, 0], { doc: 'd1', page: null }), point('b', [0, 1])]);
  const hits = await store.query(name, { vector: [1, 0], topK: 2 });
  t.same(
    hits.map((h) => h.metadata),
    [{ doc: 'd1' }, {}],
    'null values are dropped; no metadata is an empty object',
  );
});

t.test('delete removes points by id or by filter; with neither it is refused rather than emptying the collection', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [point('a', [1, 0], { doc: 'd1' }), point('b', [0, 1], { doc: 'd1' }), point('c', [1, 1], { doc: 'd2' })]);
  await store.delete(name, { ids: ['a'] });
  t.equal(await store.count(name), 2, 'by id');
  await store.delete(name, { where: { doc: 'd1' } });
  t.same(
    (await store.query(name, { vector: [1, 1], topK: 5 })).map((h) => h.id),
    ['c'],
    'by filter',
  );
  t.type(await rejection(store.delete(name, {})), BadRequestError, 'an empty selector is refused');
  t.equal(await store.count(name), 1, 'and deleted nothing');
});

t.test('reading a collection that does not exist finds nothing and does not create it', async (t) => {
  const name = collectionFor(t);
  t.same(await store.query(name, { vector: [1, 0], topK: 3 }), [], 'query finds no hits');
  t.equal(await store.count(name), 0, 'count is 0');
  await store.delete(name, { ids: ['x'] });
  t.notOk(await exists(name), 'no collection was created');
});

t.test('a vector of another length than the collection holds is a conflict that says so', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [point('a', [1, 0, 0])]);
  const onQuery = await rejection(store.query(name, { vector: [1, 0], topK: 1 }));
  t.type(onQuery, ConflictError, 'on query');
  t.match((onQuery as Error).message, /holds 3-dimensional vectors, not 2/, 'the message gives the collection’s and the query’s lengths');
  t.type(await rejection(store.upsert(name, [point('b', [1, 0])])), ConflictError, 'on upsert');
  t.type(
    await rejection(store.upsert(name, [point('c', [1, 0, 0]), point('d', [1, 0])])),
    BadRequestError,
    'mixed lengths in one upsert are refused before sending',
  );
});

t.test('upserts larger than Chroma’s max batch size are split into batches', async (t) => {
  const name = collectionFor(t);
  const max = await chroma.getMaxBatchSize();
  const points = Array.from({ length: max + 10 }, (_, i) => point(`p${i}`, [Math.cos(i), Math.sin(i)]));
  await store.upsert(name, points);
  t.equal(await store.count(name), max + 10, 'every point was stored');
});

t.test('a collection deleted behind the retriever’s back is recreated by the next upsert', async (t) => {
  const name = collectionFor(t);
  await store.upsert(name, [point('a', [1, 0])]);
  await chroma.deleteCollection({ name });
  await store.upsert(name, [point('b', [0, 1])]);
  t.same(
    (await store.query(name, { vector: [0, 1], topK: 5 })).map((h) => h.id),
    ['b'],
    'the points written before the deletion are gone and the new one is found',
  );
});

t.test('a collection name Chroma rejects is a 400 carrying Chroma’s reason', async (t) => {
  const error = await rejection(store.upsert('x', [point('a', [1, 0])]));
  t.type(error, BadRequestError, 'a name Chroma refuses is the caller’s mistake (400)');
  t.match((error as Error).message, /Chroma refused upsert on collection "x": .*3-512 characters/, 'the message carries Chroma’s reason');
});

t.test('the plugin’s url wins over the host’s [chroma].url, which is used when the plugin has none', async (t) => {
  const viaPlugin = await retriever({ pluginUrl: chromaUrl(), hostUrl: 'http://127.0.0.1:9' });
  t.same(await viaPlugin.health(), { state: 'ok' }, 'the plugin url is used');
  const viaHost = await retriever({ hostUrl: chromaUrl() });
  t.same(await viaHost.health(), { state: 'ok' }, 'the host url is used');
});

t.test('an unreachable server fails health and every call with an upstream error naming it', async (t) => {
  const down = await retriever({ pluginUrl: 'http://127.0.0.1:9' });
  t.match(await down.health(), { state: 'failed', message: /no heartbeat from Chroma at http:\/\/127\.0\.0\.1:9/ }, 'health fails naming the URL');
  const error = await rejection(down.count('anything'));
  t.type(error, UpstreamError, 'calls fail as upstream faults');
  t.match((error as Error).message, /cannot reach Chroma at http:\/\/127\.0\.0\.1:9/, 'naming the URL');
});

t.test('without any Chroma URL, health and calls say which settings to set', async (t) => {
  const none = await retriever({ hostUrl: '' });
  t.match(
    await none.health(),
    { state: 'failed', message: /\[plugins\.retriever-chroma\]\.url.*\[chroma\]\.url \(CHROMA_URL\)/ },
    'health fails naming both settings',
  );
  t.type(await rejection(none.query('anything', { vector: [1], topK: 1 })), UpstreamError, 'calls fail as upstream faults');
});

t.test('the chroma retriever keeps every rule of the retriever conformance suite (@agent-host/sdk/testing)', async (t) => {
  const store = await retriever();
  for (const rule of retrieverConformance(store, { collectionPrefix: 'conformance_' })) await t.test(rule.rule, async () => rule.check());
  const names = (await chroma.listCollections()).map((c) => c.name).filter((name) => name.startsWith('conformance_'));
  for (const name of names) await chroma.deleteCollection({ name });
});
