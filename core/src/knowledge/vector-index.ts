import { createHash } from 'node:crypto';
import type { Embedder, Retriever, VectorHit } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';

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

  /** The nearest points, without their documents: a hit's text is read from Postgres. */
  query(collection: string, vector: number[], topK: number): Promise<VectorHit[]> {
    return this.retriever().query(collection, { vector, topK, documents: false });
  }
}

export const pointId = (documentId: string, index: number) => `${documentId}:${index}`;
