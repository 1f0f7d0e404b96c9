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

/** The SQL a turn's retrieval runs: the agent's mounted sources, keyword search over chunks, and the documents cited. */
export class RetrievalStore {
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

  documentInfos(ids: string[]): Promise<DocumentInfo[]> {
    return this.db.query<DocumentInfo>(
      `SELECT d.id, d.filename, d.status, d.metadata_json, ${servableDocument('d')} AS servable FROM knowledge_documents d WHERE d.id = ANY($1::uuid[])`,
      { bind: [ids], type: QueryTypes.SELECT },
    );
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
    return keywordSearch(this.db, textSearchConfig, sourceIds, words, limit);
  }
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
async function keywordSearch(db: Sequelize, textSearchConfig: string, sourceIds: string[], words: string[], limit: number): Promise<KeywordHit[]> {
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
