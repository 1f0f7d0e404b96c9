import type { Embedder } from '../extensions/embedders.js';
import { abortedSignal, conformanceRule, rejectionOf, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'embedder';
const cosine = (a: number[], b: number[]) => {
  const dot = (x: number[], y: number[]) => x.reduce((sum, v, i) => sum + v * (y[i] ?? 0), 0);
  return dot(a, b) / (Math.sqrt(dot(a, a) * dot(b, b)) || 1);
};
const TEXTS = ['Parcels ship within two days.', 'Refunds go to the original card.', '', '配送は二日以内です'];

/**
 * What every {@link Embedder} must do: describe itself, give one finite vector of the described length per text, in
 * order (the empty text included), give nothing for nothing, and refuse to work for an aborted caller.
 * @public
 */
export function embedderConformance(embedder: Embedder): ConformanceRule[] {
  const dim = () => embedder.describe().dim;
  return [
    conformanceRule(SUITE, 'describe() names its backend, provider and model and a positive integer length', async (fail: Fail) => {
      const info = embedder.describe();
      for (const key of ['backend_type', 'provider', 'model'] as const) {
        if (typeof info[key] !== 'string' || info[key] === '') fail(`describe().${key} is ${JSON.stringify(info[key])}, not a non-empty string`);
      }
      if (!Number.isInteger(info.dim) || info.dim <= 0) fail(`describe().dim is ${info.dim}, not a positive integer`);
    }),
    conformanceRule(SUITE, 'embed() gives one vector per text, in order, each of the described length and finite', async (fail: Fail) => {
      const vectors = await embedder.embed(TEXTS);
      if (!Array.isArray(vectors) || vectors.length !== TEXTS.length)
        fail(`${TEXTS.length} texts gave ${Array.isArray(vectors) ? vectors.length : typeof vectors} vectors`);
      vectors.forEach((vector, i) => {
        if (!Array.isArray(vector) || vector.length !== dim())
          fail(`the vector of text ${i} has length ${Array.isArray(vector) ? vector.length : typeof vector}, not ${dim()}`);
        if (!vector.every((value) => typeof value === 'number' && Number.isFinite(value)))
          fail(`the vector of text ${i} holds a value that is not a finite number`);
      });
      const [alone] = await embedder.embed([TEXTS[1]!]);
      if (!alone || cosine(alone, vectors[1]!) < cosine(alone, vectors[0]!))
        fail("the second text alone is closer to the batch's first vector than to its second: vectors are out of order");
    }),
    conformanceRule(SUITE, 'embed([]) resolves to [] without calling anything', async (fail: Fail) => {
      const vectors = await embedder.embed([]);
      if (!Array.isArray(vectors) || vectors.length !== 0) fail(`embed([]) gave ${JSON.stringify(vectors)?.slice(0, 80)}`);
    }),
    conformanceRule(SUITE, 'embed() with an aborted signal rejects', async (fail: Fail) => {
      const error = await rejectionOf(embedder.embed(TEXTS, { signal: abortedSignal() }));
      if (error === undefined) fail('it resolved: a caller that gave up (a client gone, a deadline passed) still had its texts embedded');
    }),
  ];
}
