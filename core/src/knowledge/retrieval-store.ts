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
  private readonly commonWords: CommonWords;

  constructor(private readonly db: Sequelize) {
    this.commonWords = new CommonWords(db);
  }

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

  keywordSearch(textSearchConfig: string, sourceIds: string[], words: string[], limit: number): Promise<KeywordHit[]> {
    return keywordSearch(this.db, this.commonWords, textSearchConfig, sourceIds, words, limit);
  }
}

/**
 * A word Postgres' statistics (`pg_stats.most_common_elems` of `search_vector`) put in at least this many chunks is
 * common: it only adds to the score of chunks found by the question's other words. Ranking 500 chunks costs well
 * under a millisecond, so a small knowledge base never has common words.
 */
const COMMON_WORD_CHUNKS = 500;

/**
 * Postgres full-text search over the stored chunks of indexed, servable documents: chunks matching the question's
 * words (stemmed by the configured text search configuration), ranked by `ts_rank` over all of them, scaled into
 * [0, 1), each with the query words it matched. As in Lucene's common-terms query, the candidates are the chunks
 * holding one of the question's uncommon words, or all of its words when every one is common (two common words
 * together still held a quarter of the chunks at 100k). Ranking every chunk that holds any word scored most of the
 * corpus whenever a question held a common one (bench/retrieve: 245 ms p99 at 100k chunks). So a chunk holding only
 * common words is not returned, even when fewer than `limit` chunks are; when no candidate exists at all, any word
 * matching decides, as it always did. `ts_rank` rather than `ts_rank_cd`, and the matched words only for the
 * returned chunks: bench/retrieve measured cover density over common words as six times slower. A prepared
 * statement: parsing and planning it took Postgres about 0.4 ms a search, fifteen times its execution, and searches
 * were no slower on the plans Postgres keeps for it (bench/retrieve at 100k chunks: p99 4.5 and 6.0 ms, against 7.9 ms
 * planned for each search's words).
 */
async function keywordSearch(
  db: Sequelize,
  commonWords: CommonWords,
  textSearchConfig: string,
  sourceIds: string[],
  words: string[],
  limit: number,
): Promise<KeywordHit[]> {
  if (!words.length || !sourceIds.length) return [];
  const search = (candidates: string) =>
    preparedQuery<KeywordHit>(
      db,
      'keyword_search',
      `WITH q AS (SELECT websearch_to_tsquery($1::regconfig, $2) AS query, to_tsquery($1::regconfig, $6) AS candidates),
       top AS (
         SELECT c.id AS chunk_id, c.document_id, d.filename, d.metadata_json, c.source_id, c.chunk_index, c.content, c.metadata, c.search_vector,
                ts_rank(c.search_vector, q.query, 32) AS score
         FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id CROSS JOIN q
         WHERE c.source_id = ANY($4::uuid[]) AND d.status = 'indexed' AND ${servableDocument('d')} AND c.search_vector @@ q.candidates
         ORDER BY score DESC, c.id LIMIT $5)
       SELECT chunk_id, document_id, filename, metadata_json, source_id, chunk_index, content, metadata, score,
              ARRAY(SELECT w FROM unnest($3::text[]) w WHERE top.search_vector @@ plainto_tsquery($1::regconfig, w)) AS matched_words
       FROM top ORDER BY score DESC, chunk_id`,
      [textSearchConfig, words.join(' or '), words, sourceIds, limit, candidates],
    );
  // Words are letters and digits only (`queryWords`): they need no quoting in to_tsquery.
  const anyWord = words.join(' | ');
  const common = new Set(await commonWords.among(textSearchConfig, words));
  const uncommon = words.filter((w) => !common.has(w));
  const candidates = !common.size ? anyWord : uncommon.length ? uncommon.join(' | ') : words.join(' & ');
  let rows = await search(candidates);
  // Nothing: any word matching decides (a question whose uncommon words are in no mounted source).
  if (!rows.length && candidates !== anyWord) rows = await search(anyWord);
  return rows.map((r) => ({ ...r, score: Number(r.score) }));
}

/**
 * The words Postgres' statistics of `search_vector` (kept by autovacuum, and refreshed by an ingestion job as it ends)
 * put in at least `COMMON_WORD_CHUNKS` chunks. Reading them from `pg_stats` took Postgres about 0.5 ms a search (the
 * view's array of common lexemes cast and unnested each time), more than the search itself: the lexemes are kept here
 * with the version of the statistics they came from, and each search asks only for that version (the table's row
 * estimate and its last analyses) with its words' lexemes, reading the lexemes again when it changed. Each search
 * still sees the statistics as they are when it runs.
 */
class CommonWords {
  private cached?: { version: string; lexemes: Promise<Set<string>> };

  constructor(private readonly db: Sequelize) {}

  /** Which of `words` are common, stemmed by `textSearchConfig`. */
  async among(textSearchConfig: string, words: string[]): Promise<string[]> {
    const rows = await preparedQuery<{ w: string; lexemes: string[]; version: string }>(
      this.db,
      'keyword_words_and_statistics',
      `SELECT w, tsvector_to_array(to_tsvector($1::regconfig, w)) AS lexemes, v.version
       FROM unnest($2::text[]) w, (
         SELECT concat_ws(' ', c.reltuples, pg_stat_get_last_analyze_time(c.oid), pg_stat_get_last_autoanalyze_time(c.oid)) AS version
         FROM pg_class c WHERE c.oid = to_regclass('knowledge_chunks')) v`,
      [textSearchConfig, words],
    );
    if (!rows.length) return [];
    const { version } = rows[0]!;
    if (this.cached?.version !== version) {
      const lexemes = this.commonLexemes();
      this.cached = { version, lexemes };
      // A failed read is not kept: the next search reads again.
      lexemes.catch(() => {
        if (this.cached?.lexemes === lexemes) this.cached = undefined;
      });
    }
    const common = await this.cached.lexemes;
    return rows.filter((row) => row.lexemes.some((lexeme) => common.has(lexeme))).map((row) => row.w);
  }

  /** The lexemes the statistics put in at least `COMMON_WORD_CHUNKS` chunks. */
  private async commonLexemes(): Promise<Set<string>> {
    const rows = await preparedQuery<{ lexeme: string }>(
      this.db,
      'keyword_common_lexemes',
      `SELECT e.lexeme
       FROM pg_stats s JOIN pg_class c ON c.relname = s.tablename AND c.relnamespace = to_regnamespace(s.schemaname),
            unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lexeme, freq)
       WHERE s.schemaname = current_schema() AND s.tablename = 'knowledge_chunks' AND s.attname = 'search_vector' AND e.freq * c.reltuples >= $1`,
      [COMMON_WORD_CHUNKS],
    );
    return new Set(rows.map((row) => row.lexeme));
  }
}
