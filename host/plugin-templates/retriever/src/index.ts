import { definePlugin, extensionPoints, type HealthCheckResult, type Retriever, type VectorFilter, type VectorHit, type VectorPoint } from '@agent-host/sdk';

const cosine = (a: number[], b: number[]) => {
  let dot = 0;
  let na = 0;
  let nb = 0;
  a.forEach((value, i) => {
    dot += value * (b[i] ?? 0);
    na += value * value;
    nb += (b[i] ?? 0) ** 2;
  });
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
};

const matches = (point: VectorPoint, where?: VectorFilter) =>
  Object.entries(where ?? {}).every(([key, want]) => (Array.isArray(want) ? (want as unknown[]).includes(point.metadata[key]) : point.metadata[key] === want));

/**
 * A vector store, here in memory: replace the map with calls to your database. Scores are similarities in [0, 1],
 * nearest first; a filter is equality per key, a list meaning "one of".
 */
class __CLASS__ implements Retriever {
  private readonly collections = new Map<string, Map<string, VectorPoint>>();

  private collection(name: string): Map<string, VectorPoint> {
    let points = this.collections.get(name);
    if (!points) this.collections.set(name, (points = new Map()));
    return points;
  }

  async upsert(collection: string, points: VectorPoint[]): Promise<void> {
    for (const point of points) this.collection(collection).set(point.id, point);
  }

  async query(collection: string, query: { vector: number[]; topK: number; where?: VectorFilter }): Promise<VectorHit[]> {
    return [...this.collection(collection).values()]
      .filter((point) => matches(point, query.where))
      .map((point) => ({
        id: point.id,
        document: point.document,
        metadata: point.metadata,
        score: Math.max(0, Math.min(1, cosine(point.vector, query.vector))),
      }))
      .sort((a, b) => b.score - a.score)
      .slice(0, query.topK);
  }

  async delete(collection: string, selector: { ids?: string[]; where?: VectorFilter }): Promise<void> {
    const points = this.collection(collection);
    for (const point of [...points.values()]) {
      if (selector.ids?.includes(point.id) || (selector.where && matches(point, selector.where))) points.delete(point.id);
    }
  }

  async count(collection: string, where?: VectorFilter): Promise<number> {
    return [...this.collection(collection).values()].filter((point) => matches(point, where)).length;
  }

  async health(): Promise<HealthCheckResult> {
    return { state: 'ok' };
  }
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  register(env) {
    env.registerInit({
      deps: { retrievers: extensionPoints.retrievers },
      async init({ retrievers }) {
        retrievers.register('__KEY__', new __CLASS__());
      },
    });
  },
});
