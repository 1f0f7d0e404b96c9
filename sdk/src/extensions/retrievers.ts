import type { HealthCheckResult } from '../services/health.js';

/** Scalar metadata a vector store can filter on. @public */
export type VectorMetadata = Record<string, string | number | boolean | null>;

/** One stored chunk. @public */
export interface VectorPoint {
  id: string;
  vector: number[];
  /**
   * The chunk's text, or `''` when the caller keeps it elsewhere. Since SDK 1.16.0 the host sends `''`: it reads each
   * hit's text and metadata from its own database, so a store need not hold a copy (the chroma retriever stores no
   * document for `''`).
   */
  document: string;
  metadata: VectorMetadata;
}

/** A nearest-neighbour hit; `score` is a similarity in [0, 1], higher is closer. @public */
export interface VectorHit {
  id: string;
  score: number;
  /** The point's document as it was upserted; `''` for a point upserted with `''`. */
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
  /**
   * The `topK` points nearest to `vector`, best first. With `documents: false` (since SDK 1.16.0; the host's) the
   * caller reads the hits' text elsewhere, and a store may leave each hit's `document` as `''`; likewise with
   * `metadata: false` (since SDK 1.18.0; the host's) each hit's `metadata` as `{}`.
   */
  query(collection: string, query: { vector: number[]; topK: number; where?: VectorFilter; documents?: boolean; metadata?: boolean }): Promise<VectorHit[]>;
  /**
   * Optional (since SDK 1.18.0): the hits of several vectors in one call, one list per vector in their order, each as
   * `query` gives it. A store that answers many vectors in one request should have it: the host then sends the
   * queries of concurrent turns on one collection together (one Chroma request for four vectors took a third of the
   * CPU of four requests).
   */
  queryMany?(
    collection: string,
    query: { vectors: number[][]; topK: number; where?: VectorFilter; documents?: boolean; metadata?: boolean },
  ): Promise<VectorHit[][]>;
  delete(collection: string, selector: { ids?: string[]; where?: VectorFilter }): Promise<void>;
  count(collection: string, where?: VectorFilter): Promise<number>;
  health(): Promise<HealthCheckResult>;
}
