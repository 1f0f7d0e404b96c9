import { createHash } from 'node:crypto';
import type { Embedder, Retriever, VectorHit } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { GroupedCalls } from '../services/grouped-calls.js';

/**
 * Two requests at a time, one per core Chroma has here; queries that come meanwhile wait and go together. A failed
 * request fails its queries (their turns go on with the keyword fallback) without each being sent again alone: a down
 * or hung store would fail them all again, after another deadline.
 */
const QUERY_GROUPS = { concurrency: 2, maxBatch: 32, retryAlone: false };

/**
 * The configured embedder and vector store (`[knowledge] embedder`,
 * `retriever`). Each source has its own collection per embedder model
 * (`ks-<source_id>-<model fingerprint>`), so vectors of different models are
 * never compared and switching the embedder leaves old vectors unread until
 * the documents are ingested again. Point ids are `<document_id>:<chunk index>`
 * and every document is deleted before it is written, so running a document
 * twice (a recovered job) leaves exactly one set of points.
 */
export class VectorIndex {
  /** Grouped queries by collection and `topK`: one per collection a turn searched, and the agents' `top_k`s. */
  private readonly queries = new Map<string, GroupedCalls<number[], VectorHit[]>>();

  constructor(
    private readonly embedders: KeyedRegistry<Embedder>,
    private readonly retrievers: KeyedRegistry<Retriever>,
    readonly embedderKey: string,
    readonly retrieverKey: string,
  ) {}

  embedder(): Embedder {
    const embedder = this.embedders.get(this.embedderKey);
    if (!embedder) throw new Error(`embedder "${this.embedderKey}" ([knowledge] embedder) is not registered by any enabled plugin`);
    return embedder;
  }

  retriever(): Retriever {
    const retriever = this.retrievers.get(this.retrieverKey);
    if (!retriever) throw new Error(`retriever "${this.retrieverKey}" ([knowledge] retriever) is not registered by any enabled plugin`);
    return retriever;
  }

  /** The collection of a source for the current embedder model. */
  collectionFor(sourceId: string): string {
    const { provider, model, dim } = this.embedder().describe();
    const fingerprint = createHash('sha256').update(`${provider}\n${model}\n${dim}`).digest('hex').slice(0, 12);
    return `ks-${sourceId}-${fingerprint}`;
  }

  async embed(texts: string[]): Promise<number[][]> {
    return texts.length ? this.embedder().embed(texts) : [];
  }

  /**
   * Replaces every point of a document: delete, then upsert. A point holds its vector and its document's id (what
   * deletes and counts filter on) only: the chunk's text and metadata are in Postgres, read with each hit, and
   * keeping the text in Chroma took half of its upsert's time (bench/ingest).
   */
  async replaceDocument(collection: string, documentId: string, pointIds: string[], vectors: number[][]): Promise<void> {
    const retriever = this.retriever();
    await retriever.delete(collection, { where: { document_id: documentId } });
    await retriever.upsert(
      collection,
      pointIds.map((id, i) => ({ id, vector: vectors[i]!, document: '', metadata: { document_id: documentId } })),
    );
  }

  deleteDocument(collection: string, documentId: string): Promise<void> {
    return this.retriever().delete(collection, { where: { document_id: documentId } });
  }

  countDocument(collection: string, documentId: string): Promise<number> {
    return this.retriever().count(collection, { document_id: documentId });
  }

  /**
   * The nearest points, without their documents or metadata: a hit's text and metadata are read from Postgres, and its
   * document's id is in its point id. With a store that has `queryMany`, the queries of concurrent turns on one
   * collection go together, as statements are grouped: one request to Chroma cost it about 2 CPU ms whatever it held,
   * and a request of four vectors a third of four requests.
   */
  query(collection: string, vector: number[], topK: number): Promise<VectorHit[]> {
    const retriever = this.retriever();
    if (!retriever.queryMany) return retriever.query(collection, { vector, topK, documents: false, metadata: false });
    const key = `${collection}\n${topK}`;
    let group = this.queries.get(key);
    if (!group) {
      group = new GroupedCalls((vectors) => this.retriever().queryMany!(collection, { vectors, topK, documents: false, metadata: false }), QUERY_GROUPS);
      this.queries.set(key, group);
    }
    return group.submit(vector);
  }
}

export const pointId = (documentId: string, index: number) => `${documentId}:${index}`;

/** The document of a point the host wrote (`pointId`); `null` for an id of another shape. */
export function documentOfPoint(id: string): string | null {
  const colon = id.lastIndexOf(':');
  return colon > 0 ? id.slice(0, colon) : null;
}
