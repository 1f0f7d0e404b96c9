import type { Logger, RetrievalHandle, RetrievedChunk } from '@agent-host/sdk';
import type { MountedSource } from './retrieval-store.js';
import type { RagChunk, Retrieval, RetrievalRun } from './retrieval.js';

/** The agent fields retrieval needs. */
export interface RetrievingAgent {
  agent_id: string;
  hide_rag_source_filename: boolean;
  retrieval_config?: { top_k?: number; score_threshold?: number } | null;
}

/**
 * The retrieval handle of one turn: it searches the agent's mounted sources
 * and remembers every search for the turn context (`rag_context`, with the
 * original filenames). With `hide_rag_source_filename` the chunks handed to
 * the orchestrator carry no filename, so no runtime can show it to the model.
 */
export class TurnRetrieval {
  private readonly runs: (RetrievalRun | { query: string; error: string })[] = [];

  /** Read when the turn starts, alongside its other mount lookups, rather than at the first search. */
  private readonly sources?: Promise<MountedSource[]>;

  constructor(
    private readonly retrieval: Retrieval,
    private readonly agent: RetrievingAgent | null,
    private readonly logger: Logger,
  ) {
    if (!agent) return;
    this.sources = retrieval.mountedSources(agent.agent_id);
    this.sources.catch(() => undefined);
  }

  readonly handle: RetrievalHandle = {
    search: async (query, options) => {
      if (!this.agent) return [];
      const defaults = this.retrieval.settingsFor(this.agent.retrieval_config);
      try {
        const run = await this.retrieval.run(
          this.agent.agent_id,
          query,
          { top_k: options?.topK ?? defaults.top_k, threshold: options?.threshold ?? defaults.threshold },
          { sources: this.sources, log: this.logger },
        );
        this.runs.push(run);
        return run.chunks.map((chunk) => this.forModel(chunk));
      } catch (error) {
        this.logger.warn({ err: error }, 'retrieval failed; the turn goes on without passages');
        this.runs.push({ query, error: (error as Error).message });
        return [];
      }
    },
  };

  /** `rag_context`: every chunk handed on in this turn, with its source fields. */
  ragContext(): (RagChunk & { query: string })[] {
    return this.runs.flatMap((run) => ('chunks' in run ? run.chunks.map((chunk) => ({ ...chunk, query: run.query })) : []));
  }

  /** `context_payload.retrieval`: one line per search, with the fallback mode and the words it matched. */
  summary() {
    return this.runs.map((run) =>
      'chunks' in run
        ? {
            query: run.query,
            top_k: run.top_k,
            threshold: run.threshold,
            mounted_source_ids: run.mounted_sources.map((s) => s.source_id),
            vector_candidate_count: run.vector_candidates.length,
            vector_error: run.vector_error,
            fallback_mode: run.keyword_fallback.mode,
            fallback_reason: run.keyword_fallback.reason,
            matched_words: run.keyword_fallback.matched_words,
            chunk_count: run.chunks.length,
          }
        : run,
    );
  }

  private forModel(chunk: RagChunk): RetrievedChunk {
    const hide = this.agent?.hide_rag_source_filename ?? false;
    return {
      content: chunk.content,
      score: chunk.score,
      source_id: chunk.source_id,
      source_name: chunk.source_name,
      document_id: chunk.document_id,
      document_filename: hide ? null : chunk.document_filename,
      metadata: {
        ...chunk.metadata,
        chunk_id: chunk.chunk_id,
        chunk_index: chunk.chunk_index,
        retrieval_mode: chunk.retrieval_mode,
        matched_words: chunk.matched_words,
        source_kind: chunk.source_kind,
        source_priority: chunk.source_priority,
        document_origin: chunk.document_origin,
      },
    };
  }
}
