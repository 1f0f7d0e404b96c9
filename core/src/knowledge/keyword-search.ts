import { QueryTypes, type Sequelize } from 'sequelize';
import { servableDocument } from './servable.js';

export interface KeywordHit {
  chunk_id: string;
  document_id: string;
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

/**
 * Postgres full-text search over the stored chunks of indexed, servable documents:
 * any query word may match (words are OR-ed, stemmed by the configured text
 * search configuration), ranked by `ts_rank` scaled into [0, 1), with the
 * query words each returned chunk matched. `ts_rank` rather than
 * `ts_rank_cd`, and the matched words only for the returned chunks: common
 * words match most chunks, and bench/retrieve measured cover density over
 * them at 100k chunks as six times slower.
 */
export async function keywordSearch(db: Sequelize, textSearchConfig: string, sourceIds: string[], words: string[], limit: number): Promise<KeywordHit[]> {
  if (!words.length || !sourceIds.length) return [];
  const rows = await db.query<KeywordHit>(
    `WITH q AS (SELECT websearch_to_tsquery($1::regconfig, $2) AS query),
     top AS (
       SELECT c.id AS chunk_id, c.document_id, c.source_id, c.chunk_index, c.content, c.metadata, c.search_vector, ts_rank(c.search_vector, q.query, 32) AS score
       FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id CROSS JOIN q
       WHERE c.source_id = ANY($4::uuid[]) AND d.status = 'indexed' AND ${servableDocument('d')} AND c.search_vector @@ q.query
       ORDER BY score DESC, c.id LIMIT $5)
     SELECT chunk_id, document_id, source_id, chunk_index, content, metadata, score,
            ARRAY(SELECT w FROM unnest($3::text[]) w WHERE top.search_vector @@ plainto_tsquery($1::regconfig, w)) AS matched_words
     FROM top ORDER BY score DESC, chunk_id`,
    { bind: [textSearchConfig, words.join(' or '), words, sourceIds, limit], type: QueryTypes.SELECT },
  );
  return rows.map((r) => ({ ...r, score: Number(r.score) }));
}
