import { createHash } from 'node:crypto';
import { definePlugin, extensionPoints, z, type Embedder, type EmbedderInfo } from '@agent-host/sdk';

/**
 * Turns texts into vectors of `dim` numbers. This one hashes words into buckets (lexical, offline); replace `embed`
 * with calls to your model, one vector per text, in order.
 */
class __CLASS__ implements Embedder {
  constructor(private readonly dim: number) {}

  describe(): EmbedderInfo {
    return { backend_type: '__KEY__', provider: '__PLUGIN_ID__', model: 'word-hashing', dim: this.dim };
  }

  async embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]> {
    options?.signal?.throwIfAborted();
    return texts.map((text) => {
      const vector = new Array<number>(this.dim).fill(0);
      for (const word of text.toLowerCase().match(/\p{L}+|\p{N}+/gu) ?? []) {
        vector[createHash('sha256').update(word).digest().readUInt32BE(0) % this.dim]! += 1;
      }
      const norm = Math.hypot(...vector) || 1;
      return vector.map((value) => value / norm);
    });
  }
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  config: z.object({
    dim: z.number().int().min(8).max(4096).default(256).describe('Length of every vector'),
  }),
  register(env) {
    env.registerInit({
      deps: { embedders: extensionPoints.embedders },
      async init({ embedders }, config) {
        embedders.register('__KEY__', new __CLASS__(config.dim));
      },
    });
  },
});
