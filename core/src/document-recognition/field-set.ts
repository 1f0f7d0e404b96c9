import type { FusionDefinition, FusionInputSlot, FusionOutputSlot } from '@agent-host/sdk';

/** A field a runtime agent extracts: a property of its `document_field_set` output's schema. */
export interface FieldSpec {
  field_id: string;
  label: string;
  type: string | null;
}

/** How a Fusion definition serves document recognition: the upload's input slot, the fields' output slot, and the fields. */
export interface RuntimeSlots {
  upload: FusionInputSlot;
  output: FusionOutputSlot;
  fields: FieldSpec[];
}

/** A field as a run extracted it. */
export interface ExtractedField {
  field_id: string;
  position: number;
  label: string;
  extracted_value: unknown;
  confidence: number | null;
  page_number: number | null;
}

/** An extracted field, and the text its value was found as on its page. */
export interface LocatedField extends ExtractedField {
  matched_text: string | null;
}

type Schema = { type?: unknown; title?: unknown; description?: unknown; required?: unknown; properties?: Record<string, Schema> };

/**
 * The slots of a definition a document-recognition run fills and reads, or why it cannot serve: exactly one file
 * input (the upload) and no other required input (a run has nothing else to give), and a `structured_json` output
 * with `structured_output_profile = document_field_set` whose schema is an object with at least one property.
 */
export function runtimeSlots(definition: FusionDefinition): { slots: RuntimeSlots; problems: [] } | { slots: undefined; problems: string[] } {
  const problems: string[] = [];
  const files = definition.input_slots.filter((slot) => slot.kind === 'file');
  if (files.length !== 1) problems.push(`it has ${files.length} file input slots; a runtime agent takes the upload in exactly one`);
  for (const slot of definition.input_slots)
    if (slot.kind !== 'file' && slot.required) problems.push(`input slot "${slot.name}" is required, but a document-recognition run gives only the file`);
  const output = definition.output_slots.find((slot) => slot.kind === 'structured_json' && slot.structured_output_profile === 'document_field_set');
  const schema = output?.structured_output_schema as Schema | null | undefined;
  if (!output) problems.push('no output slot has structured_output_profile "document_field_set"');
  else if (!schema?.properties || Object.keys(schema.properties).length === 0)
    problems.push(`output slot "${output.name}" has no fields: its schema needs properties, one per field`);
  if (problems.length) return { slots: undefined, problems };
  // Stored definitions are JSONB, which keeps no key order: fields follow the schema's `required` list, then the rest by name.
  const required = Array.isArray(schema!.required) ? schema!.required.filter((key): key is string => typeof key === 'string') : [];
  const names = Object.keys(schema!.properties!).sort((a, b) => {
    const [ia, ib] = [required.indexOf(a), required.indexOf(b)];
    if (ia >= 0 || ib >= 0) return ia < 0 ? 1 : ib < 0 ? -1 : ia - ib;
    return a < b ? -1 : a > b ? 1 : 0;
  });
  const fields = names
    .map((field_id) => [field_id, schema!.properties![field_id]!] as const)
    .map(([field_id, property]) => ({
      field_id,
      label: typeof property.title === 'string' ? property.title : typeof property.description === 'string' ? property.description : field_id,
      type: typeof property.type === 'string' ? property.type : null,
    }));
  return { slots: { upload: files[0]!, output: output!, fields }, problems: [] };
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The fields of a `document_field_set` value, in the schema's order. A property's value is the field's value, or an
 * object `{value, confidence?, page?}` when the model gives a confidence or a page (docs/api-decisions.md); a field
 * the value lacks is extracted as null.
 */
export function readFieldSet(fields: FieldSpec[], value: unknown): ExtractedField[] {
  const object = isRecord(value) ? value : {};
  return fields.map((spec, position) => {
    const raw = object[spec.field_id];
    const wrapped = isRecord(raw) && 'value' in raw && Object.keys(raw).every((key) => ['value', 'confidence', 'page'].includes(key)) ? raw : undefined;
    const confidence = typeof wrapped?.confidence === 'number' && wrapped.confidence >= 0 && wrapped.confidence <= 1 ? wrapped.confidence : null;
    const page = typeof wrapped?.page === 'number' && Number.isInteger(wrapped.page) && wrapped.page > 0 ? wrapped.page : null;
    return {
      field_id: spec.field_id,
      position,
      label: spec.label,
      extracted_value: (wrapped ? wrapped.value : raw) ?? null,
      confidence,
      page_number: page,
    };
  });
}

/** A value as text, for finding it on a page and comparing it (null for no value). */
export function valueText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : JSON.stringify(value);
}
