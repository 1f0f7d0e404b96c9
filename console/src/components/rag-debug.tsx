import { useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { paths } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable } from './data-table';
import { ErrorMessage } from './states';

type Report = paths['/sessions/{session_id}/turns/{turn_id}/rag-debug']['post']['responses'][200]['content']['application/json'];

/**
 * A turn's retrieval run again, step by step: the mounted sources, every vector candidate with its score and why it
 * was left out, the keyword fallback, and the conclusion; the query, threshold and top_k may be changed to try.
 */
export function RagDebug({ sessionId, turnId }: { sessionId: string; turnId: string }) {
  const [query, setQuery] = useState('');
  const [threshold, setThreshold] = useState('');
  const [topK, setTopK] = useState('');
  const run = useMutation<Report, ApiError>({
    mutationFn: () =>
      expectData(
        api.POST('/sessions/{session_id}/turns/{turn_id}/rag-debug', {
          params: { path: { session_id: sessionId, turn_id: turnId } },
          body: { ...(query && { query }), ...(threshold && { threshold: Number(threshold) }), ...(topK && { top_k: Number(topK) }) },
        }),
      ),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    run.mutate();
  };
  const report = run.data;
  return (
    <section aria-labelledby="rag-debug-heading">
      <h3 id="rag-debug-heading">Retrieval, step by step</h3>
      <form className="form" onSubmit={submit} aria-label="Retrieval debug">
        <label htmlFor="rag-query">Query (empty: the turn's own)</label>
        <input id="rag-query" value={query} onChange={(e) => setQuery(e.target.value)} />
        <label htmlFor="rag-threshold">Threshold (0 to 1)</label>
        <input id="rag-threshold" type="number" min={0} max={1} step={0.05} value={threshold} onChange={(e) => setThreshold(e.target.value)} />
        <label htmlFor="rag-top-k">Top k</label>
        <input id="rag-top-k" type="number" min={1} max={50} value={topK} onChange={(e) => setTopK(e.target.value)} />
        {run.error && <ErrorMessage error={run.error} action="run the retrieval again" />}
        <button type="submit" disabled={run.isPending}>
          Run retrieval
        </button>
      </form>
      {report && (
        <>
          <p role="status">
            <strong>{report.conclusion.code.replaceAll('_', ' ')}:</strong> {report.conclusion.message} (query “{report.query}”, threshold {report.threshold},
            top {report.top_k}; sources: {report.mounted_sources.map((s) => s.name).join(', ') || 'none'})
          </p>
          {report.vector_error && <p className="field-error">Vector search failed: {report.vector_error}</p>}
          {report.vector_candidates.length > 0 && (
            <DataTable
              compact
              caption="Vector candidates"
              rows={report.vector_candidates}
              rowKey={(c) => c.chunk_id}
              columns={[
                { header: 'Score', cell: (c) => c.score.toFixed(3) },
                { header: 'File', cell: (c) => c.document_filename ?? '—' },
                { header: 'Text', cell: (c) => c.content_preview },
                { header: 'Kept', cell: (c) => (c.kept ? 'kept' : (c.excluded_reason ?? 'no').replaceAll('_', ' ')) },
              ]}
            />
          )}
          {report.keyword_fallback.used && (
            <p>
              Keyword fallback: {report.keyword_fallback.hit_count} hits on {report.keyword_fallback.matched_words.join(', ') || 'no word'}
              {report.keyword_fallback.reason ? ` (${report.keyword_fallback.reason})` : ''}.
            </p>
          )}
        </>
      )}
    </section>
  );
}
