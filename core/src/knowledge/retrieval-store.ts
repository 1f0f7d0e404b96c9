import { QueryTypes, type Sequelize } from 'sequelize';
import { preparedQuery } from '../db/prepared-query.js';
import { servableDocument } from './servable.js';

/** A knowledge source mounted on the turn's agent. */
export interface MountedSource {
  source_id: string;
  name: string;
  source_kind: string;
  priority: number;
}

/** What a retrieved chunk's citation shows of its document. */
export interface DocumentInfo {
  id: string;
  filename: string;
  status: string;
  metadata_json: Record<string, unknown>;
  servable: boolean;
}

/** A vector hit's chunk as Postgres stores it, with its document. */
export interface ChunkInfo {
  chunk_id: string;
  content: string;
  chunk_index: number;
  metadata: Record<string, unknown>;
  document: DocumentInfo;
}

/** A chunk the keyword fallback found, with its document's citation fields (indexed and servable, as searched). */
export interface KeywordHit {
  chunk_id: string;
  document_id: string;
  filename: string;
  metadata_json: Record<string, unknown>;
  source_id: string;
  chunk_index: number;
  content: string;
  metadata: Record<string, unknown>;
  score: number;
  matched_words: string[];
}

/** The distinct words of a query, lower case; `or` is left out because it is the search syntax's operator. */
export function queryWords(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words.filter((w) => w.length > 1 && w !== 'or'))];
}

/** The SQL a turn's retrieval runs: the agent's mounted sources, keyword search over chunks, and the documents cited. */
export class RetrievalStore {
  /** The common lexemes the keyword search uses ({@link RetrievalStore.commonLexemes}). */
  private common: Promise<CommonLexemes> | undefined;

  constructor(private readonly db: Sequelize) {}

  /** The agent's mounted sources, highest priority first (a prepared statement: every turn of a knowledge agent asks). */
  mountedSources(agentId: string): Promise<MountedSource[]> {
    return preparedQuery<MountedSource>(
      this.db,
      'turn_knowledge_sources',
      `SELECT s.id AS source_id, s.name, s.source_kind, s.priority FROM knowledge_mounts m JOIN knowledge_sources s ON s.id = m.source_id
       WHERE m.agent_id = try_uuid($1) ORDER BY s.priority DESC, s.name, s.id`,
      [agentId],
    );
  }

  /**
   * The stored chunks of vector hits, each with its document (a prepared statement: every vector search of a turn
   * asks). The vector store holds only vectors; a chunk's text and metadata are read here.
   */
  async chunkInfos(chunkIds: string[]): Promise<ChunkInfo[]> {
    const rows = await preparedQuery<Omit<ChunkInfo, 'document'> & { document_id: string } & Omit<DocumentInfo, 'id'>>(
      this.db,
      'vector_hit_chunks',
      `SELECT c.id AS chunk_id, c.content, c.chunk_index, c.metadata, d.id AS document_id, d.filename, d.status, d.metadata_json, ${servableDocument('d')} AS servable
       FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id WHERE c.id = ANY($1::text[])`,
      [chunkIds],
    );
    return rows.map(({ chunk_id, content, chunk_index, metadata, document_id, filename, status, metadata_json, servable }) => ({
      chunk_id,
      content,
      chunk_index,
      metadata,
      document: { id: document_id, filename, status, metadata_json, servable },
    }));
  }

  /** What a stored turn retrieved with: its agent, its user text and the agent's `retrieval_config` now. */
  async storedTurn(
    sessionId: string,
    turnId: string,
  ): Promise<{ agent_id: string | null; user_text: string; retrieval_config: { top_k?: number; score_threshold?: number } | null } | undefined> {
    const [row] = await this.db.query<{ agent_id: string | null; user_text: string; retrieval_config: { top_k?: number; score_threshold?: number } | null }>(
      `SELECT t.agent_id, um.content AS user_text, a.retrieval_config FROM conversation_turns t
       JOIN chat_messages um ON um.id = t.user_message_id LEFT JOIN agents a ON a.id = t.agent_id
       WHERE t.session_id = $1 AND t.id = try_uuid($2)`,
      { bind: [sessionId, turnId], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** Rejects unless Postgres knows `name` as a text search configuration. */
  async checkTextSearchConfig(name: string): Promise<void> {
    await this.db.query('SELECT $1::regconfig', { bind: [name] });
  }

  /**
   * Postgres full-text search over the stored chunks of indexed, servable documents ({@link KEYWORD_SEARCH}), on the
   * common words of the statistics it sees: if they changed since their common words were read, which the search
   * says, they are read again and the search runs again on them; when the candidates found nothing, any word matching
   * decides (a question whose uncommon words are in no mounted source).
   */
  async keywordSearch(textSearchConfig: string, sourceIds: string[], words: string[], limit: number): Promise<KeywordHit[]> {
    if (!words.length || !sourceIds.length) return [];
    const search = async (common: Promise<CommonLexemes>, anyWord: boolean) =>
      preparedQuery<KeywordRow>(this.db, 'keyword_search', KEYWORD_SEARCH, [
        textSearchConfig,
        words.join(' or '),
        words,
        sourceIds,
        limit,
        (await common).lexemes,
        anyWord,
      ]);
    let common = this.commonLexemes();
    let rows = await search(common, false);
    // Statistics that change again meanwhile are left for the next search.
    if (rows[0]!.version !== (await common).version) rows = await search((common = this.commonLexemes(common)), false);
    if (rows[0]!.chunk_id === null && !rows[0]!.candidates_any) rows = await search(common, true);
    return rows.filter((row) => row.chunk_id !== null).map(({ version: _, candidates_any: __, ...hit }) => ({ ...hit, score: Number(hit.score) }));
  }

  /**
   * The common lexemes the keyword search uses, read again (`keyword_common_lexemes`) if there are none yet or they
   * are `stale`. Reading them from `pg_stats` took Postgres about 0.5 ms (the view's array of common lexemes cast and
   * unnested), more than the search: they are kept with the statistics' version they came from, and read again only
   * when a search sees another version. A failed read is not kept: the next search reads again.
   */
  private commonLexemes(stale?: Promise<CommonLexemes>): Promise<CommonLexemes> {
    if (!this.common || this.common === stale) {
      const read = preparedQuery<CommonLexemes>(this.db, 'keyword_common_lexemes', COMMON_LEXEMES, [COMMON_WORD_CHUNKS]).then(([row]) => row!);
      this.common = read;
      read.catch(() => {
        if (this.common === read) this.common = undefined;
      });
    }
    return this.common;
  }
}

/** The common lexemes of the statistics of `knowledge_chunks.search_vector`, with their version. */
interface CommonLexemes {
  version: string;
  lexemes: string[];
}

/** A row of {@link KEYWORD_SEARCH}: a hit, or nulls when there is none. */
type KeywordRow = KeywordHit & { version: string; candidates_any: boolean };

/**
 * A word Postgres' statistics (`pg_stats.most_common_elems` of `search_vector`) put in at least this many chunks is
 * common: it only adds to the score of chunks found by the question's other words. Ranking 500 chunks costs well
 * under a millisecond, so a small knowledge base never has common words.
 */
const COMMON_WORD_CHUNKS = 500;

/** The version of the statistics of `knowledge_chunks` (`v`): its row estimate and its last analyses. */
const STATISTICS_VERSION = `(SELECT concat_ws(' ', c.reltuples, pg_stat_get_last_analyze_time(c.oid), pg_stat_get_last_autoanalyze_time(c.oid)) AS version
    FROM pg_class c WHERE c.oid = to_regclass('knowledge_chunks')) v`;

/** The lexemes the statistics put in at least `$1` chunks, with the statistics' version. */
const COMMON_LEXEMES = `SELECT v.version, COALESCE((
    SELECT array_agg(e.lexeme)
    FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename AND c.relnamespace = to_regnamespace(s.schemaname),
         unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lexeme, freq)
    WHERE s.schemaname = current_schema() AND s.tablename = 'knowledge_chunks' AND s.attname = 'search_vector' AND e.freq * c.reltuples >= $1), '{}') AS lexemes
  FROM ${STATISTICS_VERSION}`;

/**
 * Postgres full-text search for `$3`'s words (`$2`, the same joined by `or`, in `$1`'s text search configuration): the
 * chunks of `$4`'s sources matching them, ranked by `ts_rank` over all of them, scaled into [0, 1), at most `$5`, each
 * with the words it matched. As in Lucene's common-terms query, the candidates are the chunks holding one of the
 * question's uncommon words (none of its lexemes in `$6`), or all of its words when every one is common (two common
 * words together still held a quarter of the chunks at 100k); with `$7`, any word. Ranking every chunk that holds any
 * word scored most of the corpus whenever a question held a common one (bench/retrieve: 245 ms p99 at 100k chunks), so
 * a chunk holding only common words is not returned, even when fewer than `$5` chunks are. `ts_rank` rather than
 * `ts_rank_cd`, and the matched words only for the returned chunks: bench/retrieve measured cover density over common
 * words as six times slower. Words are letters and digits only ({@link queryWords}): they need no quoting in
 * `to_tsquery`.
 *
 * Each row also has the statistics' version as the search sees it, and whether the candidates were any word; with no
 * hit, a row of nulls has them. A prepared statement: parsing and planning it took Postgres about 0.4 ms a search,
 * fifteen times its execution, and searches were no slower on the plans Postgres keeps for it (bench/retrieve at 100k
 * chunks: p99 4.5 and 6.0 ms, against 7.9 ms planned for each search's words). The candidates' tsquery is a scalar
 * subquery, which Postgres computes once, before the scan that uses it on the full-text index.
 */
const KEYWORD_SEARCH = `WITH w AS (
    SELECT w, COALESCE(tsvector_to_array(to_tsvector($1::regconfig, w)) && $6::text[], false) AS common FROM unnest($3::text[]) w),
  k AS (
    SELECT string_agg(w, ' | ') AS any_word,
      CASE WHEN bool_and(common) THEN string_agg(w, ' & ') WHEN bool_or(common) THEN string_agg(w, ' | ') FILTER (WHERE NOT common)
        ELSE string_agg(w, ' | ') END AS candidates
    FROM w),
  q AS (
    SELECT websearch_to_tsquery($1::regconfig, $2) AS query,
      to_tsquery($1::regconfig, CASE WHEN $7::boolean THEN k.any_word ELSE k.candidates END) AS candidates, k.candidates = k.any_word AS candidates_any
    FROM k),
  top AS (
    SELECT c.id AS chunk_id, c.document_id, d.filename, d.metadata_json, c.source_id, c.chunk_index, c.content, c.metadata, c.search_vector,
           ts_rank(c.search_vector, (SELECT query FROM q), 32) AS score
    FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
    WHERE c.source_id = ANY($4::uuid[]) AND d.status = 'indexed' AND ${servableDocument('d')} AND c.search_vector @@ (SELECT candidates FROM q)
    ORDER BY score DESC, c.id LIMIT $5)
  SELECT v.version, (SELECT candidates_any FROM q) AS candidates_any,
    top.chunk_id, top.document_id, top.filename, top.metadata_json, top.source_id, top.chunk_index, top.content, top.metadata, top.score,
    ARRAY(SELECT w FROM unnest($3::text[]) w WHERE top.search_vector @@ plainto_tsquery($1::regconfig, w)) AS matched_words
  FROM ${STATISTICS_VERSION} LEFT JOIN top ON true
  ORDER BY top.score DESC, top.chunk_id`;
