import type { VectorIndex } from './vector-index.js';

/**
 * `POST /embedding-model/check-readiness` (spec 4.1): describes the configured
 * embedder and warms it up with one embedding, checking the vector length.
 * Failures are reported in the answer (`ready: false`, `error`), not thrown.
 */
export async function checkEmbeddingReadiness(index: VectorIndex) {
  const started = Date.now();
  const answer = (
    fields: { provider: string | null; model: string | null; dim: number | null; backend_type?: string },
    error: { code: string; message: string } | null,
  ) => ({
    ready: error === null,
    backend_type: fields.backend_type ?? index.embedderKey,
    provider: fields.provider,
    model: fields.model,
    dim: fields.dim,
    error,
    latency_ms: Date.now() - started,
    checked_at: new Date().toISOString(),
  });
  let info;
  try {
    info = index.embedder().describe();
  } catch (error) {
    return answer({ provider: null, model: null, dim: null }, { code: 'embedder_not_registered', message: (error as Error).message });
  }
  try {
    const [vector] = await index.embed(['embedding readiness check']);
    if (vector?.length !== info.dim)
      return answer(info, { code: 'dimension_mismatch', message: `the embedder returned ${vector?.length ?? 0} numbers; it describes ${info.dim}` });
    return answer(info, null);
  } catch (error) {
    const status = (error as { status?: number }).status;
    return answer(info, { code: 'embedding_failed', message: (error as Error).message, ...(status && { status }) });
  }
}
