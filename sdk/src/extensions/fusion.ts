import { z } from 'zod';
import type { ChatMessage, ChatModel, JsonSchema } from './models.js';

// Slot names become JSON keys and form-field names: kept to what both read the same everywhere.
const slotName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a slot name is lower-case letters, digits and _, starts with a letter, and has at most 64 characters');

/** One input of a Fusion definition: a text, or a file (with the content types it takes and a size limit). @public */
export const fusionInputSlotSchema = z
  .object({
    name: slotName,
    kind: z.enum(['text', 'file']),
    required: z.boolean().default(true),
    description: z.string().max(2000).default(''),
    /** File slots: the content types accepted (`image/*` matches every image); empty takes any type. */
    accepted_content_types: z.array(z.string().trim().min(1).max(200)).max(50).default([]),
    /** File slots: the largest file accepted, in bytes; null uses the host's `[fusion] max_file_bytes`. */
    max_size_bytes: z.number().int().positive().nullable().default(null),
  })
  .strict();

/**
 * One output of a Fusion definition: `text`, or `structured_json` with a JSON Schema its value must match.
 * `structured_output_profile: "document_field_set"` marks a JSON output as a set of document fields (an object
 * schema whose properties are the fields), which document recognition reads.
 * @public
 */
export const fusionOutputSlotSchema = z
  .object({
    name: slotName,
    kind: z.enum(['text', 'structured_json']),
    description: z.string().max(2000).default(''),
    structured_output_schema: z.record(z.string(), z.unknown()).nullable().default(null),
    structured_output_profile: z.enum(['document_field_set']).nullable().default(null),
    /** Added to the model's instructions for this output only. */
    output_instruction_fragment: z.string().max(5000).nullable().default(null),
  })
  .strict();

/**
 * A Fusion agent's `fusion_definition` (spec 2.9): which runtime runs it, the instructions, and its typed inputs
 * and outputs. The model binding is the agent's primary triple (`model_name`, `model_provider`, `model_temperature`).
 * @public
 */
export const fusionDefinitionSchema = z
  .object({
    runtime_key: z.string().trim().min(1).max(120).default('fusion_llm'),
    instructions: z.string().max(30_000).default(''),
    input_slots: z.array(fusionInputSlotSchema).min(1).max(20),
    output_slots: z.array(fusionOutputSlotSchema).min(1).max(20),
  })
  .strict()
  .superRefine((definition, context) => {
    for (const list of ['input_slots', 'output_slots'] as const) {
      const seen = new Map<string, number>();
      definition[list].forEach((slot, index) => {
        const first = seen.get(slot.name);
        if (first !== undefined)
          context.addIssue({ code: 'custom', path: [list, index, 'name'], message: `slot name "${slot.name}" repeats ${list}[${first}]` });
        else seen.set(slot.name, index);
      });
    }
    definition.input_slots.forEach((slot, index) => {
      if (slot.kind !== 'file' && slot.accepted_content_types.length)
        context.addIssue({ code: 'custom', path: ['input_slots', index, 'accepted_content_types'], message: 'only file slots take content types' });
      if (slot.kind !== 'file' && slot.max_size_bytes !== null)
        context.addIssue({ code: 'custom', path: ['input_slots', index, 'max_size_bytes'], message: 'only file slots take a size limit' });
    });
    definition.output_slots.forEach((slot, index) => {
      if (slot.kind === 'structured_json') return;
      if (slot.structured_output_schema !== null)
        context.addIssue({ code: 'custom', path: ['output_slots', index, 'structured_output_schema'], message: 'only structured_json slots take a schema' });
      if (slot.structured_output_profile !== null)
        context.addIssue({ code: 'custom', path: ['output_slots', index, 'structured_output_profile'], message: 'only structured_json slots take a profile' });
    });
  });

/** @public */
export type FusionInputSlot = z.output<typeof fusionInputSlotSchema>;
/** @public */
export type FusionOutputSlot = z.output<typeof fusionOutputSlotSchema>;
/** @public */
export type FusionDefinition = z.output<typeof fusionDefinitionSchema>;

/** A file given to a file slot: its metadata, and its bytes or its text (extracted by the host's document parsers). @public */
export interface FusionFileInput {
  slot: string;
  kind: 'file';
  input_id: string;
  filename: string;
  content_type: string;
  size_bytes: number;
  bytes(): Promise<Uint8Array>;
  /** The file's text: decoded for text types, else extracted by the parser of its type; rejects when none reads it. */
  text(): Promise<string>;
}

/** The value given to one input slot of a run. @public */
export type FusionInput = { slot: string; kind: 'text'; text: string } | FusionFileInput;

/** One output of a Fusion run (`output_item_list[]`): the slot it fills, the slot's kind, and its value. @public */
export interface FusionOutputItem {
  slot: string;
  kind: 'text' | 'structured_json';
  /** A string for `text`; the parsed JSON for `structured_json` (the raw text when it did not parse). */
  json_value: unknown;
}

/** What a runtime is asked to do: the definition (a published snapshot's, or the draft's), and the run's inputs. @public */
export interface FusionRunRequest {
  definition: FusionDefinition;
  /** One per input slot that was given, in definition order. */
  inputs: FusionInput[];
  /**
   * Set on the host's one repair attempt: the outputs the last attempt gave and why the host refused them (a
   * `structured_json` value that does not match its schema). The runtime should tell the model what to fix.
   */
  repair?: { output_item_list: FusionOutputItem[]; errors: string[] };
}

/** What a runtime gets from the host for one run. @public */
export interface FusionRunContext {
  /** The model the run is bound to (the agent's triple, or the global model's provider and name at temperature 0). */
  model: ChatModel;
  signal: AbortSignal;
}

/** What a runtime answers: one output per output slot, and what the model was sent and answered, for the run's record. @public */
export interface FusionRunResult {
  output_item_list: FusionOutputItem[];
  prompt_messages: ChatMessage[];
  model_raw_response: string;
}

/**
 * Executes a Fusion definition, registered under its `runtime_key`. The host validates the definition before a run,
 * stores the inputs and the result, checks each `structured_json` value against its schema (asking once for a
 * repair) and owns retries; the runtime turns inputs into outputs with `context.model`, honouring `context.signal`.
 * `fusionRuntimeConformance` in `@agent-host/sdk/testing` states the rules.
 * @public
 */
export interface FusionRuntime {
  execute(request: FusionRunRequest, context: FusionRunContext): Promise<FusionRunResult>;
}

/** The structured-output name runtimes ask {@link fusionOutputSchema} under (the offline model answers it). @public */
export const FUSION_OUTPUT_SCHEMA_NAME = 'fusion_output';

/** The JSON Schema a runtime may ask the model to answer in for `definition`'s outputs: one property per output slot. @public */
export function fusionOutputSchema(definition: FusionDefinition): JsonSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required: definition.output_slots.map((slot) => slot.name),
    properties: Object.fromEntries(
      definition.output_slots.map((slot) => [
        slot.name,
        slot.kind === 'text'
          ? { type: 'string', ...(slot.description && { description: slot.description }) }
          : { ...(slot.structured_output_schema ?? { type: 'object' }), ...(slot.description && { description: slot.description }) },
      ]),
    ),
  };
}
