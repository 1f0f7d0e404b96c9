import {
  BadRequestError,
  ConflictError,
  UpstreamError,
  type HealthCheckResult,
  type HttpClient,
  type Retriever,
  type VectorFilter,
  type VectorHit,
  type VectorMetadata,
  type VectorPoint,
} from '@agent-host/sdk';
import {
  ChromaClient,
  ChromaClientError,
  ChromaConnectionError,
  ChromaNotFoundError,
  ChromaValueError,
  type Collection,
  type Metadata,
  type Where,
} from 'chromadb';
import { ChromaRest } from './chroma-rest.js';

/** Collection metadata key holding the vector length the collection was created for. */
const DIM_KEY = 'agent_host_dim';

/** Chroma's `where` for a filter: equality per key, `$in` for arrays, `$and` across keys; `undefined` when empty. */
function chromaWhere(filter: VectorFilter | undefined): Where | undefined {
  const clauses = Object.entries(filter ?? {}).map(([key, value]): Where => ({ [key]: Array.isArray(value) ? { $in: value } : value }) as Where);
  if (clauses.length === 0) return undefined;
  return clauses.length === 1 ? clauses[0] : { $and: clauses };
}

/** A point's metadata as Chroma stores it: keys set to null left out, and none as null (Chroma refuses `{}`). */
function metadataOf(point: VectorPoint): Metadata | null {
  const entries = Object.entries(point.metadata).filter(([, value]) => value !== null);
  return entries.length ? (Object.fromEntries(entries) as Metadata) : null;
}

/** Cosine distance (1 - cosine similarity, in [0, 2]) as a score in [0, 1]: the cosine similarity, with opposite directions floored at 0. */
const similarityOf = (distance: number | null) => (distance === null ? 0 : Math.min(1, Math.max(0, 1 - distance)));

export interface ChromaRetrieverOptions {
  /** The Chroma server's URL, read on first use (so the host may learn it after plugins are wired). */
  url: () => string | undefined;
  /** The host's HTTP client (`coreServices.http`), for the requests sent without the chromadb client. */
  http: HttpClient;
}

interface Connection {
  url: string;
  client: ChromaClient;
  /** The requests sent without the client. */
  rest: ChromaRest;
}

/**
 * `chroma`: one Chroma collection per name, created on first upsert in cosine
 * space and tagged with the vector length; reads of a collection that does
 * not exist find nothing instead of creating it.
 */
export class ChromaRetriever implements Retriever {
  private connection?: Connection;
  private readonly collections = new Map<string, Collection>();
  private maxBatchSize?: number;

  constructor(private readonly options: ChromaRetrieverOptions) {}

  async upsert(collection: string, points: VectorPoint[]): Promise<void> {
    const dim = points[0]?.vector.length;
    if (dim === undefined) return;
    const wrong = points.find((p) => p.vector.length !== dim);
    if (wrong) throw new BadRequestError(`point "${wrong.id}" has a ${wrong.vector.length}-dimensional vector, the others ${dim}`);
    // Chroma would keep one of them without a word.
    const ids = new Set<string>();
    for (const { id } of points) {
      if (ids.has(id)) throw new BadRequestError(`point "${id}" appears more than once in one upsert`);
      ids.add(id);
    }
    await this.run('upsert', collection, { dim }, async (target) => {
      const connection = this.client();
      const size = (this.maxBatchSize ??= await connection.client.getMaxBatchSize());
      for (let start = 0; start < points.length; start += size) {
        const batch = points.slice(start, start + size);
        // No documents when none has text (the host's points): Chroma indexes each document for full-text search,
        // which took half of an upsert's time.
        const documents = batch.some((p) => p.document !== '') ? { documents: batch.map((p) => p.document) } : {};
        const records = { ids: batch.map((p) => p.id), embeddings: batch.map((p) => p.vector), ...documents, metadatas: batch.map(metadataOf) };
        // A server that does not take packed vectors gets them from the client, as JSON numbers.
        if (await connection.client.supportsBase64Encoding()) await connection.rest.upsert(target, records);
        else await target.upsert({ ...records, metadatas: records.metadatas as Metadata[] });
      }
    });
  }

  async query(
    collection: string,
    query: { vector: number[]; topK: number; where?: VectorFilter; documents?: boolean; metadata?: boolean },
  ): Promise<VectorHit[]> {
    const [hits] = await this.queryMany(collection, { ...query, vectors: [query.vector] });
    return hits ?? [];
  }

  /** One Chroma request for all the vectors: Chroma's cost is mostly per request (about 2 CPU ms). */
  async queryMany(
    collection: string,
    query: { vectors: number[][]; topK: number; where?: VectorFilter; documents?: boolean; metadata?: boolean },
  ): Promise<VectorHit[][]> {
    const none = () => query.vectors.map((): VectorHit[] => []);
    if (query.topK <= 0 || !query.vectors.length) return none();
    const result = await this.run('query', collection, undefined, async (target) => {
      for (const vector of query.vectors) this.checkDim(collection, target, vector.length);
      const where = chromaWhere(query.where);
      return this.client().rest.query(target, {
        query_embeddings: query.vectors,
        n_results: query.topK,
        // Reading the documents costs Chroma about a millisecond a query, even where none is stored, and the metadata
        // a quarter of a request of one vector (its SQLite reads).
        include: [...(query.documents === false ? [] : ['documents']), ...(query.metadata === false ? [] : ['metadatas']), 'distances'],
        ...(where ? { where } : {}),
      });
    });
    if (!result) return none();
    return query.vectors.map((_, q) =>
      (result.ids[q] ?? []).map((id, i) => ({
        id,
        score: similarityOf(result.distances?.[q]?.[i] ?? null),
        document: result.documents?.[q]?.[i] ?? '',
        metadata: (result.metadatas?.[q]?.[i] ?? {}) as VectorMetadata,
      })),
    );
  }

  async delete(collection: string, selector: { ids?: string[]; where?: VectorFilter }): Promise<void> {
    const where = chromaWhere(selector.where);
    // Neither ids nor a filter would mean "everything"; that is never what a caller meant by leaving them out.
    if (!selector.ids && !where) throw new BadRequestError('delete needs ids or a where filter');
    if (selector.ids?.length === 0 && !where) return;
    await this.run('delete', collection, undefined, (target) => target.delete({ ...(selector.ids ? { ids: selector.ids } : {}), ...(where ? { where } : {}) }));
  }

  async count(collection: string, where?: VectorFilter): Promise<number> {
    const filter = chromaWhere(where);
    const counted = await this.run('count', collection, undefined, async (target) =>
      filter ? (await target.get({ where: filter, include: [] })).ids.length : target.count(),
    );
    return counted ?? 0;
  }

  async health(): Promise<HealthCheckResult> {
    let url = '';
    try {
      const connection = this.client();
      url = connection.url;
      await connection.client.heartbeat();
      return { state: 'ok' };
    } catch (error) {
      return { state: 'failed', message: url ? `no heartbeat from Chroma at ${url}: ${(error as Error).message}` : (error as Error).message };
    }
  }

  private client(): Connection {
    if (this.connection) return this.connection;
    const url = this.options.url();
    if (!url) throw new UpstreamError('no Chroma server configured: set [plugins.retriever-chroma].url, or [chroma].url (CHROMA_URL)');
    const parsed = new URL(url);
    const ssl = parsed.protocol === 'https:';
    const client = new ChromaClient({ host: parsed.hostname, port: Number(parsed.port || (ssl ? 443 : 80)), ssl });
    // The base of Chroma's REST API, as the client builds it.
    const api = `${ssl ? 'https' : 'http'}://${parsed.host}`;
    this.connection = { url, client, rest: new ChromaRest(this.options.http, api) };
    return this.connection;
  }

  /** The collection, created (cosine space, tagged with `dim`) when `create` is given; `undefined` when it does not exist. */
  private async open(name: string, create?: { dim: number }): Promise<Collection | undefined> {
    const cached = this.collections.get(name);
    if (cached) return cached;
    const { client } = this.client();
    let collection: Collection;
    try {
      collection = create
        ? await client.getOrCreateCollection({
            name,
            metadata: { [DIM_KEY]: create.dim },
            configuration: { hnsw: { space: 'cosine' } },
            embeddingFunction: null,
          })
        : await client.getCollection({ name });
    } catch (error) {
      if (error instanceof ChromaNotFoundError) return undefined;
      throw error;
    }
    const space = collection.configuration?.hnsw?.space;
    if (space && space !== 'cosine')
      throw new ConflictError(`Chroma collection "${name}" uses the ${space} space; this retriever scores by cosine`, { code: 'VECTOR_STORE_MISMATCH' });
    this.collections.set(name, collection);
    return collection;
  }

  private checkDim(name: string, collection: Collection, dim: number): void {
    const expected = collection.metadata?.[DIM_KEY];
    if (typeof expected === 'number' && expected !== dim) {
      throw new ConflictError(
        `Chroma collection "${name}" holds ${expected}-dimensional vectors, not ${dim}: was the embedder changed? Re-index into a new collection`,
        { code: 'VECTOR_STORE_MISMATCH' },
      );
    }
  }

  /**
   * Runs `op` on the collection, mapping Chroma's errors to the host's. A
   * cached handle whose collection was deleted behind our back is dropped and
   * the operation tried once more.
   */
  private async run<T>(what: string, name: string, create: { dim: number } | undefined, op: (collection: Collection) => Promise<T>): Promise<T | undefined> {
    for (let attempt = 0; ; attempt++) {
      try {
        const collection = await this.open(name, create);
        if (!collection) return undefined;
        if (create) this.checkDim(name, collection, create.dim);
        return await op(collection);
      } catch (error) {
        if (error instanceof ChromaNotFoundError && attempt === 0 && this.collections.delete(name)) continue;
        throw this.hostError(what, name, error);
      }
    }
  }

  private hostError(what: string, name: string, error: unknown): unknown {
    if (!(error instanceof Error) || error instanceof UpstreamError || error instanceof ConflictError || error instanceof BadRequestError) return error;
    const url = this.connection?.url ?? '';
    if (error instanceof ChromaConnectionError) return new UpstreamError(`cannot reach Chroma at ${url}`, { cause: error });
    if (error instanceof ChromaClientError) {
      // Chroma's message starts with the request URL; its reason follows "status: ".
      const reason = error.message.split(' with status: ').at(-1);
      return new BadRequestError(`Chroma refused ${what} on collection "${name}": ${reason}`);
    }
    if (error instanceof ChromaValueError) return new BadRequestError(`Chroma refused ${what} on collection "${name}": ${error.message}`);
    return new UpstreamError(`Chroma ${what} on collection "${name}" failed: ${error.message}`, { cause: error });
  }
}
