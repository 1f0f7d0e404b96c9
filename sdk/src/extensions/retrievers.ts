import type { HealthCheckResult } from '../services/health.js';

/** Scalar metadata a vector store can filter on. @public */
export type VectorMetadata = Record<string, string | number | boolean | null>;

/** One stored chunk. @public */
export interface VectorPoint {
  id: string;
  vector: number[];
  document: string;
  metadata: VectorMetadata;
}

/** A nearest-neighbour hit; `score` is a similarity in [0, 1], higher is closer. @public */
export interface VectorHit {
  id: string;
  score: number;
  document: string;
  metadata: VectorMetadata;
}

/** A metadata filter (equality on each key; arrays mean "one of"). @public */
export type VectorFilter = Record<string, string | number | boolean | (string | number)[]>;

/**
 * A vector store, registered under its backend name (for example `chroma`).
 * @public
 */
export interface Retriever {
  upsert(collection: string, points: VectorPoint[]): Promise<void>;
  query(collection: string, query: { vector: number[]; topK: number; where?: VectorFilter }): Promise<VectorHit[]>;
  delete(collection: string, selector: { ids?: string[]; where?: VectorFilter }): Promise<void>;
  count(collection: string, where?: VectorFilter): Promise<number>;
  health(): Promise<HealthCheckResult>;
}
