import { z } from 'zod';
import { timestamp } from '../validation.js';
import { correctionSummary } from './corrections.js';
import { tokenUsageSummary } from './usage.js';

/** A turn of the timeline (`GET /sessions/{id}/turns`), from core/src/chat/session-queries.ts. */
export const turn = z
  .object({
    turn_id: z.string().uuid(),
    agent_id: z.string().uuid().nullable(),
    message_type: z.string(),
    status: z.string().describe('`completed`, `failed`, `aborted` (a takeover), `cancelled` (its caller or an administrator)'),
    error_message: z.string().nullable(),
    response_source: z.string(),
    orchestrator_key: z.string().nullable(),
    user_message_preview: z.string().nullable().describe('The first 200 characters'),
    assistant_reply_preview: z.string().nullable(),
    trace_id: z.string(),
    model_name: z.string().nullable(),
    model_provider: z.string().nullable(),
    model_temperature: z.number().nullable(),
    generation_usage: tokenUsageSummary,
    estimated_cost_usd: z.number().nullable(),
    first_token_ms: z.number().int().nullable(),
    latency_ms: z.number().int(),
    correction: correctionSummary.nullable(),
    created_at: timestamp,
  })
  .meta({ id: 'Turn' });

const entries = z.array(z.record(z.string(), z.unknown()));

/** The context snapshot of a turn (spec 2.2); a turn stored before snapshots existed has only `turn`. */
export const turnContext = z.object({
  observability_schema_version: z.string().optional(),
  context_payload: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('message_type, response_source, observation, model_routing, trace_spans, trace, retrieval'),
  rag_context: entries.optional(),
  skill_context: entries.optional(),
  mcp_context: entries.optional(),
  skill_calls: entries.optional(),
  mcp_calls: entries.optional(),
  turn,
});
