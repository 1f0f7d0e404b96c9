import type { DocumentParser, FusionDefinition, FusionInput, FusionOutputItem, FusionRunResult, FusionRuntime, ModelProvider } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { jobModelRouter, type ModelBinding } from '../models/job-model.js';
import type { HostConfig } from '../config/schema.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import { estimateInteractionCost, type PricingTable } from '../usage/cost.js';
import { countTurnUsage } from '../usage/token-usage.js';
import { outputErrors } from './output-schemas.js';
import type { FusionRunRow, RunError, RunOutcome, StoredInput } from './run-store.js';

/** What executing a run needs of the host. */
export interface RunExecutionDeps {
  config: HostConfig;
  runtimes: KeyedRegistry<FusionRuntime>;
  providers: KeyedRegistry<ModelProvider>;
  parsers: KeyedRegistry<DocumentParser>;
  objectStore: StreamingObjectStore;
  pricing: PricingTable;
}

// Types whose bytes are their text: read as UTF-8 without a parser.
const TEXT_TYPES = /^(text\/|application\/(json|xml|csv|x-ndjson)\b)/;

/** A stored input as the runtime reads it; a file's bytes are fetched from the object store once, when first asked. */
function runtimeInput(input: StoredInput, deps: RunExecutionDeps, signal: AbortSignal): FusionInput {
  if (input.kind === 'text') return { slot: input.slot, kind: 'text', text: input.text };
  let bytes: Promise<Uint8Array> | undefined;
  const read = () => (bytes ??= deps.objectStore.get(input.object_key).then((stored) => stored.data));
  return {
    slot: input.slot,
    kind: 'file',
    input_id: input.input_id,
    filename: input.filename,
    content_type: input.content_type,
    size_bytes: input.size_bytes,
    bytes: read,
    async text() {
      const type = input.content_type.split(';', 1)[0]!.trim().toLowerCase();
      if (TEXT_TYPES.test(type)) return new TextDecoder().decode(await read());
      const parser = deps.parsers.get(type);
      if (!parser) throw new Error(`no document parser reads ${type}, so the text of "${input.filename}" cannot be given to the model`);
      return (await parser.parse({ data: await read(), filename: input.filename, contentType: type }, { signal })).text;
    },
  };
}

/**
 * One attempt at a run: the definition's runtime with the run's bound model, each `structured_json` output checked
 * against its schema, and one repair asked of the runtime when they do not match. The outcome carries the governance
 * context (version, binding, prompt, raw answer, trace, usage); a runtime or model failure is a failed outcome, not an
 * exception, unless `signal` stopped the attempt.
 */
export function executeRun(run: FusionRunRow, deps: RunExecutionDeps, signal: AbortSignal): Promise<RunOutcome> {
  const inputs = run.inputs.map((input) => runtimeInput(input, deps, signal));
  return executeDefinition({ ...run, inputs, binding: run.model_binding }, deps, signal);
}

/** A definition to run, outside or inside a Fusion run (document recognition runs a published definition on a prepared file). */
export interface DefinitionRun {
  definition: FusionDefinition;
  inputs: FusionInput[];
  binding: ModelBinding;
  agent_version_id: string | null;
  trace_id: string;
}

/** {@link executeRun} on given inputs. */
export async function executeDefinition(
  run: DefinitionRun,
  deps: Pick<RunExecutionDeps, 'config' | 'runtimes' | 'providers' | 'pricing'>,
  signal: AbortSignal,
): Promise<RunOutcome> {
  const { binding, inputs } = run;
  const router = jobModelRouter(binding, deps.config, deps.providers);
  const attempts: { model_raw_response: string; validation_errors: string[] }[] = [];
  let last: FusionRunResult | undefined;
  let error: RunError | null = null;
  const runtime = deps.runtimes.get(run.definition.runtime_key);
  if (!runtime) {
    error = { code: 'FUSION_RUNTIME_MISSING', message: `no enabled plugin provides the Fusion runtime "${run.definition.runtime_key}"` };
  } else {
    try {
      const model = router.chatModel('general');
      let errors: string[] = [];
      for (let attempt = 0; attempt < 2; attempt++) {
        const repair = last && { output_item_list: last.output_item_list, errors };
        last = await runtime.execute({ definition: run.definition, inputs, ...(repair && { repair }) }, { model, signal });
        errors = outputErrors(run.definition, last.output_item_list);
        attempts.push({ model_raw_response: last.model_raw_response, validation_errors: errors });
        if (errors.length === 0) break;
      }
      if (errors.length) {
        error = {
          code: 'FUSION_OUTPUT_INVALID',
          message: 'the outputs did not match the definition after one repair attempt',
          validation_errors: errors,
        };
      }
    } catch (caught) {
      if (signal.aborted) throw caught;
      error = { code: 'FUSION_RUNTIME_FAILED', message: (caught as Error).message };
    }
  }
  const counted = countTurnUsage(router.calls);
  const template = deps.config.observability.trace_url_template;
  const outputs: FusionOutputItem[] | null = error ? null : last!.output_item_list;
  return {
    status: error ? 'failed' : 'succeeded',
    output_item_list: outputs,
    error,
    governance_context: {
      agent_version_id: run.agent_version_id,
      definition_source: run.agent_version_id ? 'published_version' : 'draft',
      runtime_key: run.definition.runtime_key,
      model_binding: binding,
      prompt_messages: last?.prompt_messages ?? null,
      model_raw_response: last?.model_raw_response ?? null,
      attempts,
      trace_id: run.trace_id,
      trace_url: template ? template.replaceAll('{trace_id}', run.trace_id) : null,
      usage: counted.summary,
    },
    generation_usage: counted.summary,
    estimated_cost: estimateInteractionCost(counted.calls, counted.summary.token_usage_source, deps.pricing),
  };
}
