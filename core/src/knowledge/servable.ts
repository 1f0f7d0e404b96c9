/**
 * SQL condition on a `knowledge_documents` alias: whether retrieval may
 * serve its chunks. A managed-correction document is served only while it
 * is the published document of its correction, so a candidate still being
 * published, a stale or failed publish, or a replaced revision never answers.
 */
export const servableDocument = (d: string) =>
  `(${d}.metadata_json->>'document_origin' IS DISTINCT FROM 'managed_correction' OR EXISTS (SELECT 1 FROM knowledge_corrections kc WHERE kc.document_id = ${d}.id))`;
