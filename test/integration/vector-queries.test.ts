// The vector index's queries against the real Chroma server the harness starts (TEST_CHROMA_URL): queries of one
// collection that come while others run go to Chroma together (`queryMany`), and each gets the hits it would get
// alone.
import { randomBytes } from 'node:crypto';
import { extensionPoints, type Embedder, type Retriever } from '@agent-host/sdk';
import { KeyedRegistry } from '@agent-host/sdk/kernel';
import { ChromaClient } from 'chromadb';
import t from 'tap';
import { VectorIndex } from '../../core/src/knowledge/vector-index.js';
import { loadFirstPartyPlugin } from '../helpers/first-party-plugin.js';
import { chromaUrl } from '../helpers/services.js';

const DIM = 16;

/** A unit vector mostly along `axis`, leaning a little towards every other axis by `seed`, by amounts that never repeat (no two hits tie). */
const vector = (axis: number, seed: number) => {
  const v = Array.from({ length: DIM }, (_, i) => (i === axis ? 1 : Math.abs(Math.sin((i + 1) * 12.9898 + seed * 78.233)) / 10));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

/** The chroma retriever, with its `queryMany` calls counted (each is one request to Chroma). */
async function countedChroma(): Promise<{ retriever: Retriever; requests: number[][] }> {
  const kernel = await loadFirstPartyPlugin(
    'retriever-chroma',
    {},
    {
      'core.config': { appEnv: 'test', section: (name: string) => (name === 'chroma' ? { url: chromaUrl() } : undefined) },
    },
  );
  const chroma = kernel.registry(extensionPoints.retrievers).get('chroma')!;
  const requests: number[][] = [];
  const retriever: Retriever = {
    upsert: (c, points) => chroma.upsert(c, points),
    query: (c, q) => chroma.query(c, q),
    queryMany: (c, q) => {
      requests.push(q.vectors.map((v) => v.indexOf(Math.max(...v))));
      return chroma.queryMany!(c, q);
    },
    delete: (c, s) => chroma.delete(c, s),
    count: (c, w) => chroma.count(c, w),
    health: () => chroma.health(),
  };
  return { retriever, requests };
}

/** A vector index over `retriever`, with an embedder it never calls (queries here bring their vectors). */
function indexOver(retriever: Retriever): VectorIndex {
  const registry = <T>(name: string, key: string, value: T) => {
    const keyed = new KeyedRegistry<T>(name);
    keyed.forPlugin('test', { onRegister: () => undefined }).register(key, value);
    return keyed;
  };
  const embedder: Embedder = {
    describe: () => ({ provider: 'test', model: 'none', dim: DIM }),
    embed: () => Promise.reject(new Error('not called')),
  };
  return new VectorIndex(registry('embedders', 'test', embedder), registry('retrievers', 'chroma', retriever), 'test', 'chroma');
}

t.test('queries of one collection that come together share Chroma requests, and each gets its own hits', async (t) => {
  const { retriever, requests } = await countedChroma();
  const index = indexOver(retriever);
  const collection = `test_${randomBytes(6).toString('hex')}`;
  t.teardown(() => new ChromaClient({ host: new URL(chromaUrl()).hostname, port: Number(new URL(chromaUrl()).port) }).deleteCollection({ name: collection }));
  await retriever.upsert(
    collection,
    Array.from({ length: DIM }, (_, axis) => ({ id: `p${axis}`, vector: vector(axis, 0), document: '', metadata: { axis } })),
  );

  const queries = Array.from({ length: 12 }, (_, i) => vector(i % DIM, i + 1));
  const together = await Promise.all(queries.map((v) => index.query(collection, v, 3)));
  t.equal(requests.flat().length, 12, 'every query went to Chroma');
  t.ok(requests.length < 12, `12 queries at once took ${requests.length} requests: ${JSON.stringify(requests.map((r) => r.length))}`);
  t.ok(
    requests.some((r) => r.length > 1),
    'some request carried more than one query',
  );
  for (const [i, v] of queries.entries()) {
    const alone = await retriever.query(collection, { vector: v, topK: 3, documents: false, metadata: false });
    t.same(together[i], alone, `query ${i} got what it gets alone`);
    t.equal(together[i]![0]?.id, `p${i % DIM}`, `query ${i} found its nearest point first`);
  }

  requests.length = 0;
  const [few, many] = await Promise.all([index.query(collection, queries[0]!, 1), index.query(collection, queries[0]!, 5)]);
  t.same([few.length, many.length, requests.length], [1, 5, 2], 'queries with different topK never share a request');
  const unknown = await Promise.all(queries.slice(0, 4).map((v) => index.query(`test_${randomBytes(6).toString('hex')}`, v, 3)));
  t.same(unknown, [[], [], [], []], 'an unknown collection answers every query with no hits');
});

t.test('a failed request fails its queries once, without sending each again alone', async (t) => {
  const { retriever } = await countedChroma();
  let requests = 0;
  // As a Chroma that went down: every request fails.
  const down: Retriever = {
    ...retriever,
    queryMany: async () => {
      requests++;
      throw new Error('Chroma is down');
    },
  };
  const index = indexOver(down);
  const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => index.query('test_down', vector(i % DIM, i), 3)));
  t.ok(
    outcomes.every((o) => o.status === 'rejected' && (o.reason as Error).message === 'Chroma is down'),
    'every query failed with the error',
  );
  t.equal(requests, 3, '12 queries at once took 3 requests, none sent again alone');
});
