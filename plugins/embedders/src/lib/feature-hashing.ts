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

/** FNV-1a over UTF-16 code units, then murmur3's finaliser to spread the bits. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The weighted lexical features of a text: words, word bigrams, and character 3- to 5-grams of each word. */
function features(text: string): [string, number][] {
  const words = text.normalize('NFKC').toLowerCase().match(WORD) ?? [];
  const out: [string, number][] = [];
  for (const [i, word] of words.entries()) {
    out.push([`w:${word}`, WORD_WEIGHT]);
    if (i > 0) out.push([`b:${words[i - 1]} ${word}`, BIGRAM_WEIGHT]);
    const padded = [...`<${word}>`]; // code points, so astral characters stay whole
    for (const n of CHAR_NGRAM_SIZES) {
      for (let start = 0; start + n <= padded.length; start++) out.push([`c:${padded.slice(start, start + n).join('')}`, CHAR_NGRAM_WEIGHT]);
    }
  }
  return out.length ? out : [[EMPTY_FEATURE, 1]];
}

/** Hashes the features of `text` into `dim` signed buckets and scales the vector to unit length. */
function hashEmbedding(text: string, dim: number): number[] {
  const vector = new Array<number>(dim).fill(0);
  for (const [feature, weight] of features(text)) {
    const h = hash32(feature);
    // The top bit picks the sign, so colliding features cancel out on average instead of piling up.
    vector[(h & 0x7fffffff) % dim]! += h & 0x80000000 ? -weight : weight;
  }
  const norm = Math.sqrt(vector.reduce((sum, v) => sum + v * v, 0));
  return norm === 0 ? vector : vector.map((v) => v / norm);
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
