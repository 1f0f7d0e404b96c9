import { randomUUID } from 'node:crypto';
import type { Retriever, VectorPoint } from '../extensions/retrievers.js';
import { conformanceRule, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'retriever';
const DIM = 8;

/** A unit vector along `axis`, a little towards `lean`: points along one axis are each other's nearest. */
function vector(axis: number, lean = (axis + 1) % DIM, weight = 0.1): number[] {
  const v = Array.from({ length: DIM }, (_, i) => (i === axis ? 1 : i === lean ? weight : 0));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

/** Equal keys and values, in any order. */
const sameMetadata = (a: VectorPoint['metadata'], b: VectorPoint['metadata']) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([key, value]) => a[key] === value);

const point = (id: string, axis: number, metadata: VectorPoint['metadata'] = {}): VectorPoint => ({
  id,
  vector: vector(axis),
  document: `document ${id}`,
  metadata,
});

/**
 * What every {@link Retriever} must do: keep what is upserted (an id once, the last write winning; an empty document
 * read back as `''`), find the nearest points first with scores in [0, 1], honour `topK` and metadata filters
 * (equality, and a list meaning "one of") in `query`, `count` and `delete`, answer an unknown collection with nothing
 * rather than an error, and report health. A store with the optional `queryMany` must give for each vector what
 * `query` gives for it alone.
 * Each rule writes to a collection of its own, named `<prefix><random>`.
 * @public
 */
export function retrieverConformance(retriever: Retriever, options: { collectionPrefix?: string } = {}): ConformanceRule[] {
  const collection = () => `${options.collectionPrefix ?? 'conformance_'}${randomUUID().replaceAll('-', '')}`;
  return [
    conformanceRule(SUITE, 'what is upserted is counted, and an id upserted again is replaced, not added', async (fail: Fail) => {
      const c = collection();
      await retriever.upsert(c, [point('a', 0), point('b', 1), point('c', 2)]);
      let count = await retriever.count(c);
      if (count !== 3) fail(`3 points upserted, count() says ${count}`);
      await retriever.upsert(c, [{ ...point('a', 3), document: 'document a, second version' }]);
      count = await retriever.count(c);
      if (count !== 3) fail(`after upserting "a" again count() says ${count}, not 3`);
      const [hit] = await retriever.query(c, { vector: vector(3), topK: 1 });
      if (hit?.id !== 'a' || hit.document !== 'document a, second version')
        fail(`the nearest to a's new vector is ${JSON.stringify(hit)}: the last write did not win`);
    }),
    conformanceRule(
      SUITE,
      'query() gives the nearest first, at most topK, scores in [0, 1] not increasing, documents and metadata as stored',
      async (fail: Fail) => {
        const c = collection();
        await retriever.upsert(c, [point('x', 0, { source: 's1', page: 2, draft: false }), point('y', 1), point('z', 4), point('w', 6)]);
        const hits = await retriever.query(c, { vector: vector(0), topK: 3 });
        if (hits.length !== 3) fail(`topK 3 over 4 points gave ${hits.length} hits`);
        const [first] = hits;
        if (first?.id !== 'x') fail(`the point with the query's own vector is not first: ${hits.map((h) => h.id).join(', ')}`);
        if (first.document !== 'document x') fail(`the hit's document is ${JSON.stringify(first.document)}`);
        if (!sameMetadata(first.metadata, { source: 's1', page: 2, draft: false }))
          fail(`the hit's metadata is ${JSON.stringify(first.metadata)}, not what was stored`);
        hits.forEach((hit, i) => {
          if (!(hit.score >= 0 && hit.score <= 1)) fail(`hit ${i} has score ${hit.score}, outside [0, 1]`);
          if (i > 0 && hit.score > hits[i - 1]!.score) fail(`hit ${i} scores ${hit.score}, more than the hit before it (${hits[i - 1]!.score})`);
        });
        if (first.score < 0.99) fail(`an identical vector scores ${first.score}; it should score about 1`);
      },
    ),
    conformanceRule(
      SUITE,
      "a point upserted with an empty document (the host's, since SDK 1.16.0) is kept and found, also with documents: false (and metadata: false); its hit's document is ''",
      async (fail: Fail) => {
        const c = collection();
        await retriever.upsert(c, [
          { ...point('e1', 0, { document_id: 'd1' }), document: '' },
          { ...point('e2', 1, { document_id: 'd2' }), document: '' },
        ]);
        const [hit] = await retriever.query(c, { vector: vector(0), topK: 1 });
        if (hit?.id !== 'e1') fail(`the nearest to e1's vector is ${JSON.stringify(hit)}`);
        else if (hit.document !== '') fail(`the hit's document is ${JSON.stringify(hit.document)}, not ''`);
        else if (!sameMetadata(hit.metadata, { document_id: 'd1' })) fail(`the hit's metadata is ${JSON.stringify(hit.metadata)}, not what was stored`);
        const [bare] = await retriever.query(c, { vector: vector(0), topK: 1, documents: false });
        if (bare?.id !== 'e1' || !sameMetadata(bare.metadata, { document_id: 'd1' })) fail(`with documents: false the nearest is ${JSON.stringify(bare)}`);
        const [idOnly] = await retriever.query(c, { vector: vector(0), topK: 1, documents: false, metadata: false });
        if (idOnly?.id !== 'e1' || !(idOnly.score >= 0.99)) fail(`with documents and metadata false the nearest is ${JSON.stringify(idOnly)}`);
      },
    ),
    conformanceRule(SUITE, 'a metadata filter limits query() and count(): equality, and a list meaning "one of"', async (fail: Fail) => {
      const c = collection();
      await retriever.upsert(c, [point('p1', 0, { source: 'a' }), point('p2', 0, { source: 'b' }), point('p3', 0, { source: 'c' })]);
      const only = await retriever.query(c, { vector: vector(0), topK: 10, where: { source: 'b' } });
      if (only.map((h) => h.id).join() !== 'p2') fail(`where source = "b" gave ${JSON.stringify(only.map((h) => h.id))}`);
      const some = await retriever.count(c, { source: ['a', 'c'] });
      if (some !== 2) fail(`count where source is one of ["a", "c"] is ${some}, not 2`);
    }),
    conformanceRule(SUITE, 'delete() removes the points named by id or by filter, and only those', async (fail: Fail) => {
      const c = collection();
      await retriever.upsert(c, [
        point('d1', 0, { doc: 'one' }),
        point('d2', 1, { doc: 'one' }),
        point('d3', 2, { doc: 'two' }),
        point('d4', 3, { doc: 'two' }),
      ]);
      await retriever.delete(c, { ids: ['d1'] });
      let count = await retriever.count(c);
      if (count !== 3) fail(`after deleting id d1, count() is ${count}, not 3`);
      await retriever.delete(c, { where: { doc: 'two' } });
      count = await retriever.count(c);
      if (count !== 1) fail(`after deleting where doc = "two", count() is ${count}, not 1`);
      const [left] = await retriever.query(c, { vector: vector(1), topK: 5 });
      if (left?.id !== 'd2') fail(`the point left is ${left?.id}, not d2`);
    }),
    conformanceRule(SUITE, 'a collection nothing was written to answers with no hits and a count of 0', async (fail: Fail) => {
      const c = collection();
      const hits = await retriever.query(c, { vector: vector(0), topK: 3 });
      if (hits.length !== 0) fail(`query() gave ${hits.length} hits`);
      const count = await retriever.count(c);
      if (count !== 0) fail(`count() gave ${count}`);
      await retriever.delete(c, { ids: ['nothing'] });
    }),
    ...(retriever.queryMany ? [queryManyRule(retriever, retriever.queryMany.bind(retriever), collection)] : []),
    conformanceRule(SUITE, 'health() reports its state', async (fail: Fail) => {
      const health = await retriever.health();
      if (!['ok', 'warning', 'failed'].includes(health.state)) fail(`health() gave state ${JSON.stringify(health.state)}`);
      if (health.state !== 'ok') fail(`health() is ${health.state} (${health.message ?? 'no message'}) against a working store`);
    }),
  ];
}

/** The rule of a store with `queryMany` (SDK 1.18.0): one list per vector, in their order, each what `query` gives. */
function queryManyRule(retriever: Retriever, queryMany: NonNullable<Retriever['queryMany']>, collection: () => string): ConformanceRule {
  return conformanceRule(
    SUITE,
    'queryMany() gives for each vector, in order, the hits query() gives for it alone, and one empty list per vector for an unknown collection',
    async (fail: Fail) => {
      const c = collection();
      await retriever.upsert(c, [point('m0', 0), point('m1', 1), point('m2', 2), point('m3', 3, { kind: 'other' })]);
      // Leaning so that each has one nearest and one second nearest, with no ties.
      const vectors = [vector(2, 1, 0.3), vector(0, 1, 0.3), vector(3, 2, 0.5)];
      const describe = (hits: { id: string; score: number }[]) => hits.map((h) => `${h.id}@${h.score.toFixed(6)}`).join(', ');
      for (const where of [undefined, { kind: 'other' }]) {
        const many = await queryMany(c, { vectors, topK: 2, ...(where ? { where } : {}) });
        if (many.length !== vectors.length) fail(`${vectors.length} vectors gave ${many.length} lists of hits`);
        for (const [i, v] of vectors.entries()) {
          const alone = await retriever.query(c, { vector: v, topK: 2, ...(where ? { where } : {}) });
          if (describe(many[i] ?? []) !== describe(alone))
            fail(`vector ${i}${where ? ' with a filter' : ''}: queryMany gave [${describe(many[i] ?? [])}], query [${describe(alone)}]`);
        }
      }
      const unknown = await queryMany(collection(), { vectors, topK: 2 });
      if (unknown.length !== vectors.length || unknown.some((hits) => hits.length))
        fail(`an unknown collection gave ${JSON.stringify(unknown.map((hits) => hits.length))} hits per vector, not [0, 0, 0]`);
    },
  );
}
