import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { PayloadTooLargeError, UnsupportedMediaTypeError, ValidationError, type FusionDefinition, type ValidationIssue } from '@agent-host/sdk';
import type { SpooledFile, UploadedFile } from '../knowledge/documents.js';
import { objectKeySegment } from '../services/object-key-segment.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import type { StoredInput } from './run-store.js';

/** A run's inputs as a transport read them: text values by slot (JSON `inputs`, or form fields), files by slot (form parts). */
export interface RunSubmission {
  texts: Record<string, string>;
  files: { slot: string; file: UploadedFile & { data: SpooledFile } }[];
}

const baseType = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

/** Whether `contentType` is one of `accepted` (`image/*` takes every image; an empty list takes any type). */
export function acceptsType(accepted: readonly string[], contentType: string): boolean {
  const type = baseType(contentType);
  return (
    accepted.length === 0 ||
    accepted.some((a) => {
      const want = baseType(a);
      return want === type || (want.endsWith('/*') && type.startsWith(want.slice(0, -1)));
    })
  );
}

/**
 * Holds a submission to the definition's input slots, every problem at once: a name that is not an input, a text
 * for a file slot or a file for a text slot, a required input missing or empty (422, naming each); a file over its
 * limit (413) or of a type its slot does not take (415), naming the slot.
 */
export function checkSubmission(definition: FusionDefinition, submission: RunSubmission, maxFileBytes: number): void {
  const issues: ValidationIssue[] = [];
  const slots = new Map(definition.input_slots.map((s) => [s.name, s]));
  const names = definition.input_slots.map((s) => s.name).join(', ');
  const given = new Set<string>();
  for (const [name, text] of Object.entries(submission.texts)) {
    const slot = slots.get(name);
    if (!slot) issues.push({ loc: ['body', 'inputs', name], msg: `"${name}" is not an input of this agent; its inputs: ${names}`, type: 'value_error' });
    else if (slot.kind === 'file')
      issues.push({ loc: ['body', 'inputs', name], msg: `"${name}" is a file input: send it as a file part of multipart/form-data`, type: 'value_error' });
    else if (text.trim() !== '') given.add(name);
  }
  for (const { slot: name, file } of submission.files) {
    const slot = slots.get(name);
    if (!slot) issues.push({ loc: ['body', 'inputs', name], msg: `"${name}" is not an input of this agent; its inputs: ${names}`, type: 'value_error' });
    else if (slot.kind === 'text') issues.push({ loc: ['body', 'inputs', name], msg: `"${name}" is a text input, not a file`, type: 'value_error' });
    else if (given.has(name)) issues.push({ loc: ['body', 'inputs', name], msg: `"${name}" was given more than once`, type: 'value_error' });
    else {
      given.add(name);
      const limit = Math.min(slot.max_size_bytes ?? maxFileBytes, maxFileBytes);
      if (file.data.size > limit) {
        throw new PayloadTooLargeError(`input "${name}" is ${file.data.size} bytes; its limit is ${limit} bytes`, { code: 'FUSION_INPUT_TOO_LARGE' });
      }
      if (!acceptsType(slot.accepted_content_types, file.contentType)) {
        throw new UnsupportedMediaTypeError(`input "${name}" is ${baseType(file.contentType)}; it takes ${slot.accepted_content_types.join(', ')}`, {
          code: 'FUSION_INPUT_TYPE',
        });
      }
    }
  }
  for (const slot of definition.input_slots) {
    if (slot.required && !given.has(slot.name)) {
      issues.push({ loc: ['body', 'inputs', slot.name], msg: `the ${slot.kind} input "${slot.name}" is required`, type: 'missing' });
    }
  }
  if (issues.length) throw new ValidationError(issues);
}

/**
 * Stores a checked submission's files in the object store and lists every input in definition order. `use` runs
 * with the inputs; when it fails, the stored files are removed, so a refused run leaves nothing behind.
 */
export async function withStoredInputs<T>(
  objectStore: StreamingObjectStore,
  agentId: string,
  definition: FusionDefinition,
  submission: RunSubmission,
  use: (inputs: StoredInput[]) => Promise<T>,
): Promise<T> {
  const inputs: StoredInput[] = [];
  const stored: string[] = [];
  try {
    for (const slot of definition.input_slots) {
      const inputId = randomUUID();
      const text = submission.texts[slot.name];
      if (slot.kind === 'text' && text !== undefined && text.trim() !== '') inputs.push({ input_id: inputId, slot: slot.name, kind: 'text', text });
      const part = submission.files.find((f) => f.slot === slot.name);
      if (slot.kind === 'file' && part) {
        const key = `fusion/${agentId}/inputs/${inputId}/${objectKeySegment(part.file.filename, 'input')}`;
        await objectStore.putStream(key, createReadStream(part.file.data.path), { contentType: part.file.contentType, size: part.file.data.size });
        stored.push(key);
        inputs.push({
          input_id: inputId,
          slot: slot.name,
          kind: 'file',
          filename: part.file.filename,
          content_type: part.file.contentType,
          size_bytes: part.file.data.size,
          sha256: part.file.data.sha256,
          object_key: key,
        });
      }
    }
    return await use(inputs);
  } catch (error) {
    await Promise.all(stored.map((key) => objectStore.delete(key).catch(() => undefined)));
    throw error;
  }
}
