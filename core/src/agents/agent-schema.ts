import { fusionDefinitionSchema, groundingPolicySchema } from '@agent-host/sdk';
import { z } from 'zod';
import { mcpResponseConfig, mcpRuntimeConfig } from '../mcp/admin/agent-config.js';
import { MULTITASK_STRATEGIES } from '../chat/session-turns.js';

export const AGENT_TYPES = ['chat', 'etl', 'document_extraction', 'fusion'] as const;
export const MESSAGE_TYPES = ['rule', 'form', 'other'] as const;

const text = z.string().trim().min(1);
const nonNegativeInt = z.number().int().min(0).nullable();
// The columns are DECIMAL(14, 6): eight digits before the point.
const nonNegativeUsd = z.number().min(0).max(99_999_999.999999, 'at most 99999999.999999 USD').nullable();

const modelSlot = z
  .object({
    model_name: text.max(200),
    model_provider: text.max(80),
    model_temperature: z.number().min(0).max(2).nullable().optional(),
  })
  .strict();

/** `model_routing_config` (spec 2.4): an empty slot falls back to the agent's primary triple. */
export const modelRoutingConfig = z
  .object({
    enabled: z.boolean().default(false),
    policy_version: z.string().default('v1'),
    collapse_to_explicit_override: z.boolean().default(true),
    fallback_to_primary_model: z.boolean().default(true),
    /** Whether anonymous callers may name a model in their request (an addition to spec 2.4; off: no open model proxy). */
    allow_public_model_override: z.boolean().default(false),
    tool_call_model: modelSlot.nullable().optional(),
    general_model: modelSlot.nullable().optional(),
    complex_task_model: modelSlot.nullable().optional(),
    reasoning_model: modelSlot.nullable().optional(),
  })
  .strict();

const typeResponse = z
  .object({
    enabled: z.boolean().default(false),
    response_text: z.string().default(''),
    message_key_responses: z.array(z.object({ message_key: text.max(500), response_text: text.max(20_000) }).strict()).default([]),
  })
  .strict()
  .superRefine((value, ctx) => {
    if (value.enabled && value.response_text.trim() === '') {
      ctx.addIssue({ code: 'custom', path: ['response_text'], message: 'an enabled default response needs a non-empty response_text' });
    }
    const seen = new Map<string, number>();
    value.message_key_responses.forEach((item, index) => {
      const key = item.message_key.trim().toLocaleLowerCase();
      const first = seen.get(key);
      if (first !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['message_key_responses', index, 'message_key'],
          message: `message_key "${item.message_key}" repeats item ${first} (keys are compared trimmed and case-insensitively)`,
        });
      } else seen.set(key, index);
    });
  });

/** `message_type_response_config` (spec 4.2 rule 4): fixed responses per `message_type`. */
export const messageTypeResponseConfig = z.object({ rule: typeResponse.optional(), form: typeResponse.optional(), other: typeResponse.optional() }).strict();

/** `retrieval_config` (chat only): how many chunks retrieval hands the model and the least vector score kept; unset keys use `[knowledge]` defaults. */
export const retrievalConfig = z
  .object({
    top_k: z.number().int().min(1).max(50).optional(),
    score_threshold: z.number().min(0).max(1).optional(),
  })
  .strict();

/** Every writable agent field; the create schema requires `name` and `agent_type`. */
const agentFields = {
  name: text.max(200),
  description: z.string().max(5000),
  agent_type: z.enum(AGENT_TYPES),
  status: z.enum(['active', 'inactive']),
  orchestrator_key: text.max(120).nullable(),
  system_prompt: z.string().nullable(),
  judge_prompt: z.string().nullable(),
  public_access_mode: z.enum(['admin_only', 'public_anonymous', 'public_api_key']),
  human_takeover_enabled: z.boolean(),
  hide_rag_source_filename: z.boolean(),
  multitask_strategy: z.enum(MULTITASK_STRATEGIES),
  model_name: text.max(200).nullable(),
  model_provider: text.max(80).nullable(),
  model_temperature: z.number().min(0).max(2).nullable(),
  model_routing_config: modelRoutingConfig.nullable(),
  message_type_response_config: messageTypeResponseConfig.nullable(),
  mcp_response_config: mcpResponseConfig.nullable(),
  mcp_runtime_config: mcpRuntimeConfig.nullable(),
  response_grounding_config: groundingPolicySchema.nullable(),
  retrieval_config: retrievalConfig.nullable(),
  /** Fusion agents only: the runtime, instructions, input and output slots (spec 2.9). */
  fusion_definition: fusionDefinitionSchema.nullable(),
  max_concurrent_requests: nonNegativeInt,
  max_total_requests: nonNegativeInt,
  max_requests_per_day: nonNegativeInt,
  max_total_tokens_daily: nonNegativeInt,
  max_total_tokens_monthly: nonNegativeInt,
  max_cost_usd_daily: nonNegativeUsd,
  max_cost_usd_monthly: nonNegativeUsd,
  max_tool_calls_total_per_request: nonNegativeInt,
};

export const agentCreateSchema = z.object(agentFields).partial().required({ name: true, agent_type: true }).strict();

export const agentUpdateSchema = z.object(agentFields).partial().strict();

/** A stored configuration object as the API shows it (kept as saved; older rows may predate today's fields). */
const storedConfig = z.record(z.string(), z.unknown()).nullable();

/** An agent as the API shows it (`Agents.get`): every field, the stored configurations, and what the host derives. */
export const agentViewSchema = z
  .object({
    agent_id: z.string().uuid(),
    ...agentFields,
    name: z.string(),
    orchestrator_key: z.string().nullable(),
    model_name: z.string().nullable(),
    model_provider: z.string().nullable(),
    model_routing_config: storedConfig,
    message_type_response_config: storedConfig,
    mcp_response_config: storedConfig,
    mcp_runtime_config: storedConfig,
    response_grounding_config: storedConfig,
    retrieval_config: storedConfig,
    fusion_definition: storedConfig,
    judge_prompt_version: z.string().describe('`default`, or `sha256:` and 16 hex digits of the judge prompt'),
    published_agent_version_id: z.string().uuid().nullable(),
    created_at: z.string().datetime(),
    updated_at: z.string().datetime(),
  })
  .meta({ id: 'Agent' });

export type AgentCreateInput = z.output<typeof agentCreateSchema>;
export type AgentUpdateInput = z.output<typeof agentUpdateSchema>;

/** The usage limits of spec 2.4 and part 8 (chat only). */
export const USAGE_LIMIT_FIELDS = [
  'max_concurrent_requests',
  'max_total_requests',
  'max_requests_per_day',
  'max_total_tokens_daily',
  'max_total_tokens_monthly',
  'max_cost_usd_daily',
  'max_cost_usd_monthly',
  'max_tool_calls_total_per_request',
] as const;

/** Fields held by a version snapshot (spec 4.7 and 9.1 name the configuration ones; the rest keep a rollback whole). */
export const SNAPSHOT_FIELDS = [
  'name',
  'description',
  'agent_type',
  'status',
  'orchestrator_key',
  'system_prompt',
  'judge_prompt',
  'public_access_mode',
  'human_takeover_enabled',
  'hide_rag_source_filename',
  'multitask_strategy',
  'model_name',
  'model_provider',
  'model_temperature',
  'model_routing_config',
  'message_type_response_config',
  'mcp_response_config',
  'mcp_runtime_config',
  'response_grounding_config',
  'retrieval_config',
  'fusion_definition',
  ...USAGE_LIMIT_FIELDS,
] as const;

/** Fields only chat agents may set to a non-empty value (spec 2.4), the usage limits included. */
export const CHAT_ONLY_FIELDS = [
  'orchestrator_key',
  'model_routing_config',
  'message_type_response_config',
  'mcp_response_config',
  'mcp_runtime_config',
  'response_grounding_config',
  'retrieval_config',
  ...USAGE_LIMIT_FIELDS,
] as const;
