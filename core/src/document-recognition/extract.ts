import { NotFoundError } from '@agent-host/sdk';
import type {
  DocumentInput,
  DocumentParser,
  DocumentRecognizer,
  FusionDefinition,
  FusionFileInput,
  FusionRuntime,
  ModelProvider,
  PreparedDocument,
} from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { HostConfig } from '../config/schema.js';
import { executeDefinition } from '../fusion/execute-run.js';
import type { RunOutcome } from '../fusion/run-store.js';
import type { ModelBinding } from '../models/job-model.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import type { PricingTable } from '../usage/cost.js';
import { readFieldSet, valueText, type LocatedField, type RuntimeSlots } from './field-set.js';

/** What extracting fields from a document needs of the host. */
export interface ExtractionDeps {
  objectStore: StreamingObjectStore;
  config: HostConfig;
  recognizers: KeyedRegistry<DocumentRecognizer>;
  parsers: KeyedRegistry<DocumentParser>;
  runtimes: KeyedRegistry<FusionRuntime>;
  providers: KeyedRegistry<ModelProvider>;
  pricing: PricingTable;
}

/** What a document is extracted with: a runtime agent version's definition, slots and model, and the recognizer. */
export interface ExtractionBinding {
  definition: FusionDefinition;
  slots: RuntimeSlots;
  binding: ModelBinding;
  recognizer_key: string;
  agent_version_id: string | null;
  trace_id: string;
}

/** Why an extraction did not give fields: a code and a message (and the output's schema errors). */
export interface ExtractionFailure {
  code: string;
  message: string;
  validation_errors?: string[];
}

export type Extraction =
  | { prepared: PreparedDocument | undefined; failure: ExtractionFailure; run: RunOutcome | undefined }
  | { prepared: PreparedDocument; failure: undefined; run: RunOutcome; fields: LocatedField[] };

const baseType = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

/**
 * A document's fields: the recognizer prepares it (text, layout, rendition, previews, within the host's limits),
 * the definition runs with the prepared text in its upload slot, the `document_field_set` output is read into
 * fields, and each value is located on its page. A refused document or a failed definition is a failure with the
 * reason, not an exception, unless `signal` stopped the work. Document-recognition runs and evaluation items both use it.
 */
export async function extractFields(document: DocumentInput, how: ExtractionBinding, deps: ExtractionDeps, signal: AbortSignal): Promise<Extraction> {
  const recognizer = deps.recognizers.get(how.recognizer_key);
  if (!recognizer) {
    const message = `no enabled plugin provides the document recognizer "${how.recognizer_key}" ([document_recognition] recognizer_key)`;
    return { prepared: undefined, run: undefined, failure: { code: 'DOCUMENT_RECOGNIZER_MISSING', message } };
  }
  const limits = deps.config.document_recognition;
  let prepared: PreparedDocument;
  try {
    prepared = await recognizer.prepare(document, {
      parse: (input) => {
        const type = baseType(input.contentType);
        const parser = deps.parsers.get(type);
        if (!parser) return Promise.reject(new Error(`no document parser reads ${type}`));
        return parser.parse({ ...input, contentType: type }, { signal });
      },
      limits: { preview_pages: limits.preview_pages, preview_width_px: limits.preview_width_px, max_pages: limits.max_pages },
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    return { prepared: undefined, run: undefined, failure: { code: 'DOCUMENT_UNREADABLE', message: (error as Error).message } };
  }
  const upload: FusionFileInput = {
    slot: how.slots.upload.name,
    kind: 'file',
    input_id: how.trace_id,
    filename: document.filename,
    content_type: document.contentType,
    size_bytes: document.data.byteLength,
    bytes: async () => document.data,
    text: async () => prepared.text,
  };
  const run = await executeDefinition(
    { definition: how.definition, inputs: [upload], binding: how.binding, agent_version_id: how.agent_version_id, trace_id: how.trace_id },
    deps,
    signal,
  );
  if (run.error) return { prepared, run, failure: { ...run.error } };
  const output = run.output_item_list!.find((item) => item.slot === how.slots.output.name);
  const extracted = readFieldSet(how.slots.fields, output?.json_value);
  const toLocate = extracted.flatMap((field) => {
    const text = valueText(field.extracted_value);
    return field.page_number === null && text ? [{ field_id: field.field_id, value: text }] : [];
  });
  const located = new Map(recognizer.locate(toLocate, prepared).map((location) => [location.field_id, location]));
  const fields = extracted.map((field) => {
    const location = located.get(field.field_id);
    return { ...field, page_number: field.page_number ?? location?.page_number ?? null, matched_text: location?.matched_text ?? null };
  });
  return { prepared, run, failure: undefined, fields };
}

/** {@link extractFields} on a document kept in the object store; one that is gone is a failure, not an exception. */
export async function extractStored(
  deps: ExtractionDeps,
  document: { key: string; filename: string; contentType: string },
  how: ExtractionBinding,
  signal: AbortSignal,
): Promise<Extraction> {
  const stored = await deps.objectStore.get(document.key).catch((error: unknown) => (error instanceof NotFoundError ? undefined : Promise.reject(error)));
  if (!stored) {
    const message = `the document "${document.filename}" is no longer in the object store (${document.key})`;
    return { prepared: undefined, run: undefined, failure: { code: 'OBJECT_NOT_FOUND', message } };
  }
  return extractFields({ data: stored.data, filename: document.filename, contentType: document.contentType }, how, deps, signal);
}
