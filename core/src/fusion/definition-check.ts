import type { FusionDefinition, FusionRuntime } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { schemaProblem } from './output-schemas.js';

/**
 * The rules of a `fusion_definition` beyond its shape (the SDK's `fusionDefinitionSchema`): the runtime is
 * registered, every output schema compiles, and a `document_field_set` output describes an object of fields.
 * Each problem is its path inside the definition and a message.
 */
export function definitionProblems(definition: FusionDefinition, runtimes: KeyedRegistry<FusionRuntime>): [(string | number)[], string][] {
  const problems: [(string | number)[], string][] = [];
  if (!runtimes.has(definition.runtime_key)) {
    const known = runtimes
      .list()
      .map((r) => r.key)
      .join(', ');
    problems.push([['runtime_key'], `unknown runtime_key "${definition.runtime_key}"; registered: ${known || 'none (enable the fusion-llm plugin)'}`]);
  }
  definition.output_slots.forEach((slot, index) => {
    const schema = slot.structured_output_schema;
    const problem = schema && schemaProblem(schema);
    if (problem) problems.push([['output_slots', index, 'structured_output_schema'], problem]);
    if (slot.structured_output_profile === 'document_field_set') {
      const properties = (schema as { type?: unknown; properties?: unknown } | null)?.properties;
      if (schema?.type !== 'object' || !properties || typeof properties !== 'object' || Object.keys(properties).length === 0) {
        problems.push([
          ['output_slots', index, 'structured_output_profile'],
          'document_field_set needs a structured_output_schema of type "object" whose properties are the document fields',
        ]);
      }
    }
  });
  return problems;
}
