import { NotFoundError } from '@agent-host/sdk';
import type { Sequelize } from 'sequelize';
import { z } from 'zod';
import { RetrievalStore } from './retrieval-store.js';
import { emptyRun, type Retrieval, type RetrievalRun } from './retrieval.js';

export const ragDebugSchema = z
  .object({
    query: z.string().trim().min(1).max(8000).optional(),
    threshold: z.number().min(0).max(1).optional(),
    top_k: z.number().int().min(1).max(50).optional(),
  })
  .strict();
export type RagDebugInput = z.output<typeof ragDebugSchema>;

/** Why the run found what it found, in one code and one sentence. */
function conclusion(run: RetrievalRun, agentId: string | null): { code: string; message: string } {
  if (!agentId) return { code: 'no_agent', message: 'the turn ran without an agent, so nothing was retrieved' };
  if (!run.mounted_sources.length) return { code: 'no_mounted_sources', message: 'the agent has no knowledge source mounted' };
  const vectorChunks = run.chunks.filter((c) => c.retrieval_mode === 'vector').length;
  if (vectorChunks) return { code: 'vector_hits', message: `${vectorChunks} chunk(s) scored at least ${run.threshold} by vector similarity` };
  const why = run.vector_error
    ? `the vector search failed (${run.vector_error})`
    : run.vector_candidates.length
      ? `no vector candidate scored at least ${run.threshold}`
      : 'the vector search found no chunks';
  if (run.chunks.length)
    return { code: 'keyword_fallback_hits', message: `${why}; the keyword fallback matched ${run.keyword_fallback.matched_words.join(', ')}` };
  return { code: 'no_hits', message: `${why}, and the keyword fallback matched no chunk` };
}

/**
 * `POST /sessions/{session_id}/turns/{turn_id}/rag-debug`: retrieval run
 * again for a stored turn, by default with the turn's agent and its user
 * text, with `query`, `threshold` and `top_k` overridable; nothing is stored.
 */
export async function ragDebug(db: Sequelize, retrieval: Retrieval, sessionId: string, turnId: string, input: RagDebugInput) {
  const turn = await new RetrievalStore(db).storedTurn(sessionId, turnId);
  if (!turn) throw new NotFoundError(`turn ${turnId} not found in session ${sessionId}`, { code: 'TURN_NOT_FOUND' });
  const defaults = retrieval.settingsFor(turn.retrieval_config);
  const settings = { top_k: input.top_k ?? defaults.top_k, threshold: input.threshold ?? defaults.threshold };
  const query = input.query ?? turn.user_text;
  const run = turn.agent_id ? await retrieval.run(turn.agent_id, query, settings, { everyCandidate: true }) : emptyRun(query, settings);
  return {
    session_id: sessionId,
    turn_id: turnId,
    agent_id: turn.agent_id,
    query: run.query,
    top_k: run.top_k,
    threshold: run.threshold,
    mounted_sources: run.mounted_sources,
    vector_candidates: run.vector_candidates,
    vector_error: run.vector_error,
    final_chunks: run.chunks,
    keyword_fallback: run.keyword_fallback,
    conclusion: conclusion(run, turn.agent_id),
  };
}
