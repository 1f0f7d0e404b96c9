import type { Embedder, EmbedderInfo } from '@agent-host/sdk';

/** Names the feature set below; change it whenever a change would alter the vectors, so stored ones are re-indexed. */
const FEATURE_HASHING_MODEL = 'feature-hashing-v1';

const WORD = /[\p{L}\p{N}]+/gu;
const CHAR_NGRAM_SIZES = [3, 4, 5];
// Weights chosen so that a word's character n-grams carry about as much
// (squared) weight as the word itself: they add recall for inflections and
// typos without drowning exact word matches.
const WORD_WEIGHT = 1;
const BIGRAM_WEIGHT = 0.5;
const CHAR_NGRAM_WEIGHT = 0.2;
// Empty text still gets a unit vector (a zero vector has no cosine).
const EMPTY_FEATURE = '\u0000empty';

const FNV_OFFSET = 0x811c9dc5;

/** FNV-1a over the UTF-16 code units `from` to `to` of `text`, continuing from the state `h`. */
function fnv(h: number, text: string, from = 0, to = text.length): number {
  for (let i = from; i < to; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** murmur3's finaliser, to spread the bits of an FNV state. */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// FNV states after each feature's prefix: a feature is hashed as its prefix and text without building the string.
const WORD_PREFIX = fnv(FNV_OFFSET, 'w:');
const BIGRAM_PREFIX = fnv(FNV_OFFSET, 'b:');
const CHAR_NGRAM_PREFIX = fnv(FNV_OFFSET, 'c:');

const SURROGATE = /[\ud800-\udfff]/;

/** The code unit offset of each code point of `text`, and its length. */
function codePointOffsets(text: string): number[] {
  const offsets: number[] = [];
  for (let at = 0; at < text.length; at += text.codePointAt(at)! > 0xffff ? 2 : 1) offsets.push(at);
  offsets.push(text.length);
  return offsets;
}

/**
 * Adds a feature's signed weight to its bucket: the top bit of the hash picks the sign, so colliding features cancel
 * out on average instead of piling up.
 */
function add(vector: Float64Array, hash: number, weight: number): void {
  vector[(hash & 0x7fffffff) % vector.length]! += hash & 0x80000000 ? -weight : weight;
}

/**
 * Hashes the weighted lexical features of `text` (each word, each word bigram, and the character 3- to 5-grams of
 * each word padded as `<word>`) into `dim` signed buckets, and scales the vector to unit length. A feature is
 * hashed as the string `w:<word>`, `b:<previous> <word>` or `c:<n-gram>` would be, in that order per word, so
 * the vectors are those of feature-hashing-v1 (the sums run in the same order).
 */
function hashEmbedding(text: string, dim: number): number[] {
  const vector = new Float64Array(dim);
  const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
  let bigram = 0; // FNV state of `b:<previous word> `
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    add(vector, finish(fnv(WORD_PREFIX, word)), WORD_WEIGHT);
    if (i > 0) add(vector, finish(fnv(bigram, word)), BIGRAM_WEIGHT);
    bigram = fnv(fnv(BIGRAM_PREFIX, word), ' ');
    const padded = `<${word}>`;
    // Code unit offsets of the padded word's code points, so astral characters stay whole; a word without surrogates
    // (nearly every one) has one code unit per code point and needs none.
    const offsets = SURROGATE.test(word) ? codePointOffsets(padded) : undefined;
    const points = offsets ? offsets.length - 1 : padded.length;
    for (const n of CHAR_NGRAM_SIZES) {
      for (let start = 0; start + n <= points; start++) {
        const h = offsets ? fnv(CHAR_NGRAM_PREFIX, padded, offsets[start], offsets[start + n]) : fnv(CHAR_NGRAM_PREFIX, padded, start, start + n);
        add(vector, finish(h), CHAR_NGRAM_WEIGHT);
      }
    }
  }
  if (!words.length) add(vector, finish(fnv(FNV_OFFSET, EMPTY_FEATURE)), 1);
  let sum = 0;
  for (const v of vector) sum += v * v;
  const norm = Math.sqrt(sum);
  return Array.from(vector, (v) => (norm === 0 ? v : v / norm));
}

/**
 * `feature-hashing`: deterministic and offline. Similar vectors mean shared
 * words and word pieces (lexical overlap), not shared meaning: "car" and
 * "automobile" are unrelated to it. Meant for development, tests and closed
 * machines; use a model-backed embedder for semantic search.
 */
export class FeatureHashingEmbedder implements Embedder {
  constructor(private readonly dim: number) {}

  describe(): EmbedderInfo {
    return { backend_type: 'feature-hashing', provider: 'local', model: FEATURE_HASHING_MODEL, dim: this.dim };
  }

  async embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]> {
    return texts.map((text) => {
      options?.signal?.throwIfAborted();
      return hashEmbedding(text, this.dim);
    });
  }
}
