import { fusionDefinitionSchema } from '@agent-host/sdk';
import type { AgentView } from '../agents/agents.js';
import type { ModelOverride } from '../chat/model-router.js';
import { extractStored, type ExtractionDeps } from '../document-recognition/extract.js';
import { runtimeSlots } from '../document-recognition/field-set.js';
import { jobModelBinding, type ModelBinding } from '../models/job-model.js';
import { newTraceId } from '../observability/trace-id.js';
import { EMPTY_COST } from '../usage/cost.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';
import type { ItemRow } from './dataset-store.js';
import { fieldScores } from './field-score.js';
import type { ResultInput, RunRow } from './run-store.js';
import { resultBase } from './run-worker.js';

const NO_MODEL: TokenUsageSummary = { input_tokens: 0, output_tokens: 0, total_tokens: 0, token_usage_source: 'no_model_invocation' };

/** Why a fusion agent's draft cannot be evaluated on reviewed documents, or nothing when it can. */
export function documentEvaluationProblem(agent: AgentView): string | undefined {
  if (agent.agent_type !== 'fusion') return `agent ${agent.agent_id} is a ${agent.agent_type} agent; document_recognition snapshots run on fusion agents`;
  if (!agent.fusion_definition) return `agent ${agent.agent_id} has no fusion_definition`;
  const { problems } = runtimeSlots(fusionDefinitionSchema.parse(agent.fusion_definition));
  return problems.length ? `the draft fusion_definition cannot extract document fields: ${problems.join('; ')}` : undefined;
}

/**
 * One `document_recognition` item: the agent's draft definition (the next version of the extractor) extracts the
 * item's document with the host's recognizer, and each reviewed field is compared with what it extracted (see
 * {@link fieldScores}); no judge. A document or model failure fails the item only.
 */
export async function scoreDocumentItem(
  run: RunRow,
  agent: AgentView,
  override: ModelOverride | null,
  item: ItemRow,
  deps: ExtractionDeps,
  signal: AbortSignal,
): Promise<ResultInput> {
  const started = Date.now();
  const document = item.source_document!;
  const base = {
    ...resultBase(run, item),
    response_source: 'document_recognition',
    judge_status: 'skipped' as const,
    judge_score: null,
    grounding: null,
    judge_usage: NO_MODEL,
    judge_cost: EMPTY_COST,
  };
  const failed = (message: string, usage = NO_MODEL, cost = EMPTY_COST): ResultInput => ({
    ...base,
    predicted_answer: null,
    status: 'failed',
    error_message: message,
    rule_score: null,
    field_scores: null,
    generation_usage: usage,
    generation_cost: cost,
    latency_ms: Date.now() - started,
  });
  const problem = documentEvaluationProblem(agent);
  if (problem) return failed(problem);
  const definition = fusionDefinitionSchema.parse(agent.fusion_definition);
  const binding: ModelBinding = override?.model_name
    ? {
        model_name: override.model_name,
        model_provider: override.model_provider ?? deps.config.models.default_model_provider,
        model_temperature: override.model_temperature ?? 0,
        source: 'agent',
      }
    : jobModelBinding(agent, deps.config);
  const extraction = await extractStored(
    deps,
    { key: document.object_key, filename: document.filename, contentType: document.content_type },
    {
      definition,
      slots: runtimeSlots(definition).slots!,
      binding,
      recognizer_key: deps.config.document_recognition.recognizer_key,
      agent_version_id: null,
      trace_id: newTraceId(),
    },
    signal,
  );
  const usage = extraction.run?.generation_usage ?? NO_MODEL;
  const cost = extraction.run?.estimated_cost ?? EMPTY_COST;
  if (extraction.failure) return failed(`${extraction.failure.code}: ${extraction.failure.message}`, usage, cost);
  const predicted = Object.fromEntries(extraction.fields.map((field) => [field.field_id, field.extracted_value]));
  const scored = fieldScores(
    item.expected_fields ?? {},
    predicted,
    extraction.fields.map((field) => field.field_id),
  );
  return {
    ...base,
    predicted_answer: JSON.stringify(predicted),
    status: 'succeeded',
    error_message: null,
    rule_score: scored.rule,
    field_scores: scored.fields,
    generation_usage: usage,
    generation_cost: cost,
    latency_ms: Date.now() - started,
  };
}
