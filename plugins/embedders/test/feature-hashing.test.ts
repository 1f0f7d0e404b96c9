// The embedders plugin as the kernel loads it, and its offline
// `feature-hashing` embedder: deterministic, unit-length, lexical vectors.
import { createHash } from 'node:crypto';
import { extensionPoints, PluginRefusedError, type Embedder } from '@agent-host/sdk';
import t from 'tap';
import { contributesOf, loadFirstPartyPlugin } from '../../../test/helpers/first-party-plugin.js';

async function embedders(config: Record<string, unknown> = {}) {
  const kernel = await loadFirstPartyPlugin('embedders', config);
  return { kernel, registry: kernel.registry(extensionPoints.embedders) };
}

const { kernel, registry } = await embedders();
const hashing = registry.get('feature-hashing') as Embedder;
const embed = async (text: string) => (await hashing.embed([text]))[0]!;
const cosine = (a: number[], b: number[]) => a.reduce((sum, v, i) => sum + v * b[i]!, 0);
const norm = (v: number[]) => Math.sqrt(cosine(v, v));

t.test('the plugin registers the embedders its manifest contributes, and only those', async (t) => {
  t.same(kernel.plugins()[0]?.registered.embedders, (await contributesOf('embedders')).embedders, 'registered embedders equal the manifest’s embedders');
});

t.test('feature-hashing describes itself as a local lexical model with 512 dimensions by default', async (t) => {
  t.same(
    hashing.describe(),
    { backend_type: 'feature-hashing', provider: 'local', model: 'feature-hashing-v1', dim: 512 },
    'describe() names the backend, a local provider, the versioned model and the default size',
  );
  t.equal((await embed('x')).length, 512, 'vectors have the described length');
});

t.test('feature_hashing_dim sets the vector length; a length below 16 refuses start-up', async (t) => {
  const small = (await embedders({ feature_hashing_dim: 64 })).registry.get('feature-hashing')!;
  t.equal(small.describe().dim, 64, 'describe() reports the configured length');
  t.equal((await small.embed(['parcel']))[0]!.length, 64, 'vectors have the configured length');
  const error = await embedders({ feature_hashing_dim: 8 }).catch((e: unknown) => e);
  t.type(error, PluginRefusedError, 'start-up is refused');
  t.match((error as Error).message, /embedders.*invalid_config.*feature_hashing_dim/, 'the refusal names the key');
});

t.test('the same text always gives the same vector, in any batch and any instance', async (t) => {
  const other = (await embedders()).registry.get('feature-hashing')!;
  const [alone] = await hashing.embed(['Parcels ship within two days.']);
  const [, inBatch] = await other.embed(['something else', 'Parcels ship within two days.']);
  t.same(inBatch, alone, 'no state leaks between texts or instances');
});

t.test('vectors are pinned: a change to the features must come with a new model name', async (t) => {
  const vector = await embed('Parcels ship within two days.');
  const digest = createHash('sha256')
    .update(vector.map((v) => v.toFixed(6)).join(','))
    .digest('hex');
  t.equal(digest, '1485d48cf8c57d456d7f0c4b5368498d59414738e13860dade8c020db82bc0d1', 'stored vectors stay comparable with new ones under feature-hashing-v1');
  // Every bit of the vectors, over texts that exercise compatibility forms, accents, astral characters, CJK, digits and repetition.
  const texts = [
    'Parcels ship within two days.',
    '',
    '!!!',
    '配送は二日以内です',
    'Ünïcödé ﬁne Straße 𝔘𝔫𝔦 😀 emoji-𝒳y ab a',
    `xxx 12 345 6789 ${'word '.repeat(50)}`,
  ];
  const bits = createHash('sha256');
  for (const v of await hashing.embed(texts)) bits.update(new Uint8Array(Float64Array.from(v).buffer));
  t.equal(bits.digest('hex'), '00addab698c82a4fd7fd468736385861f08a4022ddcf2cea0455553c8246cea1', 'the vectors are bit for bit those of feature-hashing-v1');
});

t.test('vectors have unit length, the empty text included', async (t) => {
  for (const text of ['Parcels ship within two days.', '', '!!!', '配送は二日以内です']) {
    t.ok(Math.abs(norm(await embed(text)) - 1) < 1e-9, `|embed(${JSON.stringify(text)})| = 1`);
  }
});

t.test('similarity follows shared words and word pieces, not meaning', async (t) => {
  const question = await embed('When do parcels ship?');
  const answer = await embed('Parcels ship within two days of the order.');
  const unrelated = await embed('Refunds are issued to the original card.');
  t.ok(cosine(question, answer) > cosine(question, unrelated) + 0.2, 'a passage sharing words with the question scores clearly higher');
  t.ok(cosine(await embed('shipping'), await embed('shipped')) > 0.1, 'inflections share character n-grams');
  t.ok(Math.abs(cosine(await embed('car'), await embed('automobile'))) < 0.1, 'synonyms without shared pieces are unrelated: the embedder is lexical');
  t.ok(cosine(await embed('dog bites man'), await embed('man bites dog')) < 0.95, 'word bigrams make word order count');
  t.ok(cosine(await embed('Shipping \u00c9T\u00c9'), await embed('shipping e\u0301te\u0301')) > 1 - 1e-9, 'case and Unicode composition do not matter');
});
