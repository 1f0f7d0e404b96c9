import type { FusionDefinition, FusionOutputItem, JsonSchema } from '@agent-host/sdk';
import { Ajv, type ValidateFunction } from 'ajv';
import formats from 'ajv-formats';

// One validator for every definition: compiled schemas are cached by their text, so a published definition's
// schemas compile once per process however many runs use them.
const ajv = new Ajv({ allErrors: true, strict: false });
// ajv-formats is CommonJS with `exports.default`: Node's ESM import sees the function itself, TypeScript the namespace.
const addFormats = ((formats as unknown as { default?: typeof formats.default }).default ?? formats) as typeof formats.default;
addFormats(ajv);
const compiled = new Map<string, ValidateFunction>();
const COMPILED_MAX = 1000;

function validator(schema: JsonSchema): ValidateFunction {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(schema);
    if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, validate);
  }
  return validate;
}

/** Why `schema` is not a JSON Schema the validator can use, or undefined when it compiles. */
export function schemaProblem(schema: JsonSchema): string | undefined {
  try {
    validator(schema);
    return undefined;
  } catch (error) {
    return `is not a valid JSON Schema: ${(error as Error).message}`;
  }
}

/** The schema a `structured_json` output is held to: its own, or any JSON object when it has none. */
const schemaOf = (slot: FusionDefinition['output_slots'][number]): JsonSchema => slot.structured_output_schema ?? { type: 'object' };

/**
 * What is wrong with a run's outputs, one message per problem (`/fields/total must be number`): a missing or
 * repeated slot, a text output that is not a string, a `structured_json` value that does not match its schema.
 */
export function outputErrors(definition: FusionDefinition, items: FusionOutputItem[]): string[] {
  const errors: string[] = [];
  for (const slot of definition.output_slots) {
    const found = items.filter((i) => i.slot === slot.name);
    if (found.length !== 1) {
      errors.push(`output "${slot.name}" was given ${found.length} times; it must be given once`);
      continue;
    }
    const value = found[0]!.json_value;
    if (slot.kind === 'text') {
      if (typeof value !== 'string') errors.push(`output "${slot.name}" must be a string`);
      continue;
    }
    const validate = validator(schemaOf(slot));
    if (!validate(value)) {
      for (const e of validate.errors ?? []) errors.push(`output "${slot.name}"${e.instancePath ? ` at ${e.instancePath}` : ''} ${e.message ?? 'is invalid'}`);
    }
  }
  for (const item of items) if (!definition.output_slots.some((s) => s.name === item.slot)) errors.push(`output "${item.slot}" is not in the definition`);
  return errors;
}
