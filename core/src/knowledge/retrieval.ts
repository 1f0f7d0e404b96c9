import type { Logger } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import type { HostConfig } from '../config/schema.js';
import { runtimeConfigCache, type RuntimeConfigCache } from '../db/runtime-config-cache.js';
import { queryWords, RetrievalStore, type ChunkInfo, type DocumentInfo, type MountedSource } from './retrieval-store.js';
import { documentOfPoint, type VectorIndex } from './vector-index.js';

export interface RetrievalSettings {
  top_k: number;
  threshold: number;
}

/** One chunk retrieval hands on, with its source fields (spec 2.2). */
export interface RagChunk {
  chunk_id: string;
  content: string;
  score: number;
  retrieval_mode: 'vector' | 'keyword_fallback';
  matched_words: string[] | null;
  source_id: string;
  source_name: string;
  source_kind: string;
  source_priority: number;
  document_id: string;
  document_filename: string;
  document_origin: string;
  chunk_index: number;
  metadata: Record<string, unknown>;
}

/** A raw nearest neighbour, kept or not, with why not. */
export interface VectorCandidate {
  chunk_id: string;
  score: number;
  source_id: string;
  document_id: string | null;
  document_filename: string | null;
  chunk_index: number | null;
  content_preview: string;
  kept: boolean;
  excluded_reason: 'below_threshold' | 'document_not_indexed' | 'correction_not_published' | 'beyond_top_k' | null;
}

export interface KeywordFallback {
  used: boolean;
  mode: 'keyword_fallback' | null;
  reason: string | null;
  query_words: string[];
  matched_words: string[];
  hit_count: number;
}

export interface RetrievalRun {
  query: string;
  top_k: number;
  threshold: number;
  mounted_sources: MountedSource[];
  vector_candidates: VectorCandidate[];
  vector_error: string | null;
  keyword_fallback: KeywordFallback;
  chunks: RagChunk[];
}

/** A run that found nothing (yet). */
export function emptyRun(query: string, settings: RetrievalSettings, sources: MountedSource[] = []): RetrievalRun {
  return {
    query,
    top_k: settings.top_k,
    threshold: settings.threshold,
    mounted_sources: sources,
    vector_candidates: [],
    vector_error: null,
    keyword_fallback: { used: false, mode: null, reason: null, query_words: [], matched_words: [], hit_count: 0 },
    chunks: [],
  };
}

/** A vector hit's metadata as it read when Chroma held it (Chroma stores no null value). */
const withoutNulls = (metadata: Record<string, unknown>) => Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== null));

const preview = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

/**
 * Retrieval over an agent's mounted sources only: nearest chunks by vector
 * (at least `threshold`, best `top_k`), and when no vector hit is left (none
 * close enough, or the vector path failed) Postgres full-text search over the
 * same sources' stored chunks, recording the fallback and the words matched.
 * Only chunks of documents currently `indexed` and servable are returned.
 */
export class Retrieval {
  private readonly store: RetrievalStore;
  private readonly cache: RuntimeConfigCache;

  constructor(
    db: Sequelize,
    private readonly index: VectorIndex,
    private readonly config: HostConfig['knowledge'],
    private readonly logger: Logger,
  ) {
    this.store = new RetrievalStore(db);
    this.cache = runtimeConfigCache(db);
  }

  /** The agent's `retrieval_config` over the `[knowledge]` defaults. */
  settingsFor(retrievalConfig: { top_k?: number; score_threshold?: number } | null | undefined): RetrievalSettings {
    return { top_k: retrievalConfig?.top_k ?? this.config.default_top_k, threshold: retrievalConfig?.score_threshold ?? this.config.default_score_threshold };
  }

  /** Read through the runtime config cache: every turn of an agent asks. */
  mountedSources(agentId: string): Promise<MountedSource[]> {
    return this.cache.read(`knowledge-mounts:${agentId}`, () => this.store.mountedSources(agentId));
  }

  /**
   * `sources`: the agent's mounted sources when the caller has read them already; `log`: the caller's (a turn's)
   * logger; `everyCandidate`: read the stored chunk of every vector candidate, also of those below the threshold
   * (rag-debug shows them all). A turn reads only the chunks of candidates that reach it: the others' text is shown
   * nowhere, and when none reaches it (the keyword fallback) no chunk is read at all.
   */
  async run(
    agentId: string,
    query: string,
    settings: RetrievalSettings,
    options: { sources?: Promise<MountedSource[]>; log?: Logger; everyCandidate?: boolean } = {},
  ): Promise<RetrievalRun> {
    const sources = await (options.sources ?? this.mountedSources(agentId));
    return this.search(query, settings, sources, options.log ?? this.logger, options.everyCandidate ?? false);
  }

  private async search(query: string, settings: RetrievalSettings, sources: MountedSource[], log: Logger, everyCandidate: boolean): Promise<RetrievalRun> {
    const run = emptyRun(query, settings, sources);
    if (!sources.length || query.trim() === '') return run;
    const bySource = new Map(sources.map((s) => [s.source_id, s]));
    try {
      run.chunks = await this.vectorSearch(run, bySource, everyCandidate);
    } catch (error) {
      run.vector_error = (error as Error).message;
      log.warn({ err: error }, 'vector search failed; using the keyword fallback');
    }
    if (!run.chunks.length) run.chunks = await this.keywordFallback(run, bySource);
    return run;
  }

  private async vectorSearch(run: RetrievalRun, sources: Map<string, MountedSource>, everyCandidate: boolean): Promise<RagChunk[]> {
    const [vector] = await this.index.embed([run.query]);
    const fetch = Math.max(run.top_k * 2, 10);
    const hits = (
      await Promise.all(
        [...sources.values()].map(async (s) =>
          (await this.index.query(this.index.collectionFor(s.source_id), vector!, fetch)).map((hit) => ({ ...hit, source: s })),
        ),
      )
    ).flat();
    hits.sort((a, b) => b.score - a.score || b.source.priority - a.source.priority);
    // A turn reads the chunks of the hits that reach the threshold only: below it is all it needs to know of the others.
    const isRead = (hit: { score: number }) => everyCandidate || hit.score >= run.threshold;
    const read = hits.filter(isRead);
    const stored = read.length ? new Map((await this.store.chunkInfos(read.map((h) => h.id))).map((c) => [c.chunk_id, c])) : new Map<string, ChunkInfo>();
    const chunks: RagChunk[] = [];
    for (const hit of hits) {
      // A point without its chunk row belongs to a document being indexed again or deleted.
      const chunk = stored.get(hit.id);
      const document = chunk?.document;
      const excluded = isRead(hit) ? exclusion(document, hit.score < run.threshold, chunks.length >= run.top_k) : 'below_threshold';
      run.vector_candidates.push({
        chunk_id: hit.id,
        score: hit.score,
        source_id: hit.source.source_id,
        document_id: document?.id ?? documentOfPoint(hit.id),
        document_filename: document?.filename ?? null,
        chunk_index: chunk?.chunk_index ?? null,
        content_preview: preview(chunk?.content ?? hit.document),
        kept: excluded === null,
        excluded_reason: excluded,
      });
      if (excluded === null)
        chunks.push(ragChunk(hit.id, chunk!.content, hit.score, 'vector', null, hit.source, document!, chunk!.chunk_index, withoutNulls(chunk!.metadata)));
    }
    return chunks;
  }

  private async keywordFallback(run: RetrievalRun, sources: Map<string, MountedSource>): Promise<RagChunk[]> {
    const words = queryWords(run.query);
    const hits = await this.store.keywordSearch(this.config.text_search_config, [...sources.keys()], words, run.top_k);
    run.keyword_fallback = {
      used: true,
      mode: 'keyword_fallback',
      reason: run.vector_error
        ? `vector search failed: ${run.vector_error}`
        : run.vector_candidates.length
          ? `no vector hit scored at least ${run.threshold}`
          : 'the vector search found no chunks',
      query_words: words,
      matched_words: [...new Set(hits.flatMap((h) => h.matched_words))],
      hit_count: hits.length,
    };
    return hits.map((h) =>
      ragChunk(
        h.chunk_id,
        h.content,
        h.score,
        'keyword_fallback',
        h.matched_words,
        sources.get(h.source_id)!,
        { id: h.document_id, filename: h.filename, metadata_json: h.metadata_json },
        h.chunk_index,
        h.metadata,
      ),
    );
  }
}

/** Why a vector hit whose chunk was read is left out (its document first, as rag-debug shows it), or `null` when kept. */
function exclusion(document: DocumentInfo | undefined, belowThreshold: boolean, topKFull: boolean): VectorCandidate['excluded_reason'] {
  if (!document || document.status !== 'indexed') return 'document_not_indexed';
  if (!document.servable) return 'correction_not_published';
  if (belowThreshold) return 'below_threshold';
  return topKFull ? 'beyond_top_k' : null;
}

function ragChunk(
  chunkId: string,
  content: string,
  score: number,
  mode: RagChunk['retrieval_mode'],
  matchedWords: string[] | null,
  source: MountedSource,
  document: Pick<DocumentInfo, 'id' | 'filename' | 'metadata_json'>,
  chunkIndex: number,
  metadata: Record<string, unknown>,
): RagChunk {
  return {
    chunk_id: chunkId,
    content,
    score,
    retrieval_mode: mode,
    matched_words: matchedWords,
    source_id: source.source_id,
    source_name: source.name,
    source_kind: source.source_kind,
    source_priority: source.priority,
    document_id: document.id,
    document_filename: document.filename,
    document_origin: typeof document.metadata_json.document_origin === 'string' ? document.metadata_json.document_origin : 'upload',
    chunk_index: chunkIndex,
    metadata,
  };
}
