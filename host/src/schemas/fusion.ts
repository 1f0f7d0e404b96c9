import { fusionInputSlotSchema, fusionOutputSlotSchema } from '@agent-host/sdk';
import { z } from 'zod';
import { runWait, timestamp } from '../validation.js';
import { estimatedCost, tokenUsageSummary } from './usage.js';

/** Fusion runs and public API keys as requests and responses show them (spec 2.9, 4.11, 5.7), from core/src/fusion. */

export const FUSION_FORM_DESCRIPTION = 'one field per text input and one file part per file input, each named by its slot; an optional agent_version_id field';

export const fusionRunBody = z
  .object({
    inputs: z.record(z.string(), z.string()).default({}).describe('Text inputs by slot name; file inputs need multipart/form-data'),
    agent_version_id: z.string().uuid().optional(),
  })
  .strict();

export const fusionRunWait = runWait('at most [fusion] wait_seconds, its default');

const runError = z
  .object({
    code: z.enum(['FUSION_OUTPUT_INVALID', 'FUSION_RUNTIME_FAILED', 'FUSION_RUNTIME_MISSING', 'FUSION_WORKER_LOST']),
    message: z.string(),
    validation_errors: z.array(z.string()).optional().describe('FUSION_OUTPUT_INVALID: what did not match, after the one repair attempt'),
  })
  .meta({ id: 'FusionRunError' });

const runInput = z.union([
  z.object({ input_id: z.string().uuid(), slot: z.string(), kind: z.literal('text'), text: z.string() }),
  z.object({
    input_id: z.string().uuid(),
    slot: z.string(),
    kind: z.literal('file'),
    filename: z.string(),
    content_type: z.string(),
    size_bytes: z.number().int(),
    sha256: z.string(),
    download_url: z.string().describe('Same-origin download route of this file'),
  }),
]);

const outputItem = z.object({
  slot: z.string(),
  kind: z.enum(['text', 'structured_json']),
  json_value: z.unknown().describe('The canonical output: a string for text, the validated JSON for structured_json'),
});

const publicRunFields = {
  run_id: z.string().uuid(),
  agent_id: z.string().uuid(),
  agent_version_id: z.string().uuid().nullable().describe('The version run; null for an administrator run of the draft'),
  status: z.enum(['queued', 'running', 'recovering', 'succeeded', 'failed']),
  inputs: z.array(runInput),
  output_item_list: z.array(outputItem).nullable(),
  error: runError.nullable(),
  generation_usage: tokenUsageSummary.nullable(),
  estimated_cost: estimatedCost.nullable(),
  created_at: timestamp,
  started_at: timestamp.nullable(),
  completed_at: timestamp.nullable().describe('When the run succeeded or failed'),
};

export const publicFusionRun = z.object(publicRunFields).meta({ id: 'PublicFusionRun' });

export const createdPublicFusionRun = publicFusionRun.extend({
  caller_token: z
    .string()
    .nullable()
    .describe('Anonymous callers: send it as x-caller-token to read this run and to make more under the same owner; null with an API key'),
});

export const fusionRun = z
  .object({
    ...publicRunFields,
    channel: z.enum(['admin', 'public']),
    created_by: z.string().uuid().nullable(),
    authenticated_agent_api_key_id: z.string().uuid().nullable(),
    attempt_count: z.number().int(),
    lease_token: z.string().uuid().nullable().describe('The token of the attempt holding the run; null when none does'),
    last_attempt_started_at: timestamp.nullable(),
    worker_heartbeat_at: timestamp.nullable().describe('Liveness of the attempt, never an end time'),
    heartbeat_stale: z.boolean(),
    trace_id: z.string(),
    trace_url: z.string().nullable(),
    governance_context: z
      .record(z.string(), z.unknown())
      .describe('Version, definition source, runtime, model binding after fallback, prompt messages, raw model answer, attempts, trace, usage'),
  })
  .meta({ id: 'FusionRun' });

export const fusionRunFilters = z.object({ status: z.enum(['queued', 'running', 'recovering', 'succeeded', 'failed']).optional() }).strict();

export const fusionRuntimeMetadata = z
  .object({
    agent_id: z.string().uuid(),
    name: z.string(),
    description: z.string(),
    public_access_mode: z.string(),
    published_agent_version_id: z.string().uuid(),
    input_slots: z.array(fusionInputSlotSchema),
    output_slots: z.array(fusionOutputSlotSchema.omit({ output_instruction_fragment: true })),
    max_file_bytes: z.number().int(),
  })
  .meta({ id: 'FusionRuntimeMetadata' });

export const publicApiKeyBody = z
  .object({
    label: z.string().trim().min(1).max(200),
    expires_at: timestamp.nullable().optional().describe('When the key stops working; absent or null: when revoked'),
  })
  .strict();

export const publicApiKey = z
  .object({
    key_id: z.string().uuid(),
    agent_id: z.string().uuid(),
    label: z.string(),
    prefix: z.string().describe('The first characters of the key, to tell keys apart; the key itself is shown once'),
    expires_at: timestamp.nullable(),
    revoked: z.boolean(),
    revoked_at: timestamp.nullable(),
    last_used_at: timestamp.nullable().describe('To the minute'),
    created_at: timestamp,
  })
  .meta({ id: 'PublicApiKey' });

export const createdPublicApiKey = publicApiKey.extend({
  api_key: z.string().describe('The key: send it as x-agent-api-key. Shown only in this response; only its hash is stored'),
});
