import { runtimeSlots, type LocatedField } from './field-set.js';
import { extractStored, type ExtractionDeps } from './extract.js';
import type { PreviewRecord, RecognitionIssue, RecognitionOutcome, RecognitionRunRow } from './run-store.js';

// A field the model gives with less confidence than this is listed as an issue for the reviewer.
const LOW_CONFIDENCE = 0.5;

/** The `/result` download: the extraction as the run produced it (reviews change the run's fields, never this). */
export interface RecognitionResult {
  run_id: string;
  runtime_agent_id: string;
  runtime_agent_version_id: string;
  source: { filename: string; content_type: string; sha256: string };
  fields: { field_id: string; label: string; value: unknown; confidence: number | null; page_number: number | null }[];
  summary: Record<string, unknown>;
  issue_list: RecognitionIssue[];
}

/** Where a run's own objects live: written again by a recovered attempt, so an attempt that dies leaves nothing extra. */
export const runObjectKeys = (runId: string) => ({
  pdf: `document-recognition/${runId}/rendition.pdf`,
  preview: (page: number) => `document-recognition/${runId}/previews/page-${page}.png`,
  result: `document-recognition/${runId}/result.json`,
});

/** What a reviewer should look at first: fields with no value, fields found on no page, fields the model doubted. */
function fieldIssues(fields: LocatedField[]): RecognitionIssue[] {
  return fields.flatMap((field): RecognitionIssue[] => {
    if (field.extracted_value === null)
      return [{ severity: 'warning', kind: 'field_missing', field_id: field.field_id, message: `no value was extracted for "${field.label}"` }];
    const issues: RecognitionIssue[] = [];
    if (field.page_number === null)
      issues.push({ severity: 'info', kind: 'field_not_located', field_id: field.field_id, message: `the value of "${field.label}" was found on no page` });
    if (field.confidence !== null && field.confidence < LOW_CONFIDENCE)
      issues.push({
        severity: 'warning',
        kind: 'field_low_confidence',
        field_id: field.field_id,
        message: `the model gave "${field.label}" a confidence of ${field.confidence}`,
      });
    return issues;
  });
}

/**
 * One attempt at a run: the stored document extracted with the bound version (see {@link extractFields}), its PDF
 * rendition, previews and result JSON written under the run's keys, and the outcome to store. A document the
 * recognizer refuses, or a definition that fails, is a failed outcome with the reason (and whatever was made).
 */
export async function attemptRun(run: RecognitionRunRow, deps: ExtractionDeps, signal: AbortSignal): Promise<RecognitionOutcome> {
  const snapshot = run.runtime_binding_snapshot;
  const keys = runObjectKeys(run.id);
  const slots = runtimeSlots(snapshot.definition).slots!;
  const extraction = await extractStored(
    deps,
    { key: run.source_object_key, filename: run.source_filename, contentType: run.source_content_type },
    {
      definition: snapshot.definition,
      slots,
      binding: snapshot.model_binding,
      recognizer_key: snapshot.recognizer_key,
      agent_version_id: run.runtime_agent_version_id,
      trace_id: run.trace_id,
    },
    signal,
  );
  const { prepared } = extraction;
  signal.throwIfAborted();
  let pdfKey: string | null = null;
  const previews: PreviewRecord[] = [];
  if (prepared?.pdf) {
    await deps.objectStore.put(keys.pdf, prepared.pdf.data, { contentType: 'application/pdf' });
    pdfKey = keys.pdf;
  }
  for (const preview of prepared?.previews ?? []) {
    await deps.objectStore.put(keys.preview(preview.page_number), preview.png, { contentType: 'image/png' });
    previews.push({ page_number: preview.page_number, width: preview.width, height: preview.height, object_key: keys.preview(preview.page_number) });
  }
  const documentIssues = (prepared?.warnings ?? []).map((message): RecognitionIssue => ({ severity: 'warning', kind: 'document_warning', message }));
  const common = {
    pdf_object_key: pdfKey,
    pdf_rendition: prepared?.pdf?.rendition ?? null,
    page_count: prepared?.page_count ?? null,
    preview_pages: previews,
    generation_usage: extraction.run?.generation_usage ?? null,
    estimated_cost: extraction.run?.estimated_cost ?? null,
  };
  if (extraction.failure) {
    return {
      ...common,
      status: 'failed',
      summary: null,
      issue_list: documentIssues,
      workspace_output: null,
      result_object_key: null,
      result_size_bytes: null,
      error: extraction.failure,
      fields: [],
    };
  }
  const { fields } = extraction;
  const issues = [...documentIssues, ...fieldIssues(fields)];
  const summary = {
    field_count: fields.length,
    extracted_field_count: fields.filter((f) => f.extracted_value !== null).length,
    located_field_count: fields.filter((f) => f.page_number !== null).length,
    low_confidence_field_count: fields.filter((f) => f.confidence !== null && f.confidence < LOW_CONFIDENCE).length,
    page_count: prepared!.page_count,
    pdf_rendition: prepared!.pdf?.rendition ?? null,
    issue_count: issues.length,
  };
  const workspace_output = {
    output_item_list: extraction.run.output_item_list,
    runtime_key: snapshot.definition.runtime_key,
    recognizer_key: snapshot.recognizer_key,
    text_characters: prepared!.text.length,
    element_count: prepared!.elements.length,
  };
  const resultDocument: RecognitionResult = {
    run_id: run.id,
    runtime_agent_id: run.runtime_agent_id,
    runtime_agent_version_id: run.runtime_agent_version_id,
    source: { filename: run.source_filename, content_type: run.source_content_type, sha256: run.source_sha256 },
    fields: fields.map(({ field_id, label, extracted_value, confidence, page_number }) => ({
      field_id,
      label,
      value: extracted_value,
      confidence,
      page_number,
    })),
    summary,
    issue_list: issues,
  };
  const result = Buffer.from(JSON.stringify(resultDocument, null, 2));
  await deps.objectStore.put(keys.result, result, { contentType: 'application/json' });
  return {
    ...common,
    status: 'succeeded',
    summary,
    issue_list: issues,
    workspace_output,
    result_object_key: keys.result,
    result_size_bytes: result.byteLength,
    error: null,
    fields,
  };
}
