// The SQL of `model_usage_events`: each model call's usage as the UsageRecorder writes it, read back as `ModelCall`s,
// so turns, scheduled runs and evaluation items can be summarized from stored events.
import type { ModelCallUsage, UsageScope } from '@agent-host/sdk';
import { QueryTypes, type Sequelize } from 'sequelize';
import type { ModelCall } from './token-usage.js';

/** A stored model call and the scope it was recorded under. */
export interface StoredModelCall extends ModelCall {
  scope_kind: string;
  scope_id: string;
}

interface UsageEventRow {
  scope_kind: string;
  scope_id: string;
  model_provider: string;
  model_name: string;
  input_tokens: number;
  output_tokens: number;
  token_usage_source: string;
}

function toCall(row: UsageEventRow): StoredModelCall {
  const base = { scope_kind: row.scope_kind, scope_id: row.scope_id, model_provider: row.model_provider, model_name: row.model_name };
  const counts = { input_tokens: row.input_tokens, output_tokens: row.output_tokens };
  if (row.token_usage_source === 'provider_reported') return { ...base, provider_usage: counts };
  if (row.token_usage_source === 'tokenizer_estimated') return { ...base, local_estimate: counts };
  // `unavailable` (or an unknown source): no counts and no texts, so the
  // summary of its scope is `unavailable`.
  return base;
}

/**
 * The model calls recorded under `scope_kind` for any of `scope_ids`, in the
 * order they were recorded. Rows with `token_usage_source =
 * 'no_model_invocation'` are not model calls and are left out, so a scope
 * without calls summarizes as `no_model_invocation`.
 */
/** Writes one model call's usage, with the plugin or core part that made it. */
export async function insertUsageEvent(sequelize: Sequelize, scope: UsageScope, usage: ModelCallUsage, source: string): Promise<void> {
  await sequelize.query(
    `INSERT INTO model_usage_events
       (scope_kind, scope_id, model_provider, model_name, input_tokens, output_tokens, token_usage_source, source, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())`,
    { bind: [scope.scope_kind, scope.scope_id, usage.model_provider, usage.model_name, usage.input_tokens, usage.output_tokens, usage.source, source] },
  );
}

export async function readUsageCalls(sequelize: Sequelize, scope_kind: string, scope_ids: readonly string[]): Promise<StoredModelCall[]> {
  if (scope_ids.length === 0) return [];
  const rows = await sequelize.query<UsageEventRow>(
    `SELECT scope_kind, scope_id, model_provider, model_name, input_tokens, output_tokens, token_usage_source
       FROM model_usage_events
      WHERE scope_kind = $1 AND scope_id = ANY($2::text[]) AND token_usage_source <> 'no_model_invocation'
      ORDER BY id`,
    { bind: [scope_kind, [...new Set(scope_ids)]], type: QueryTypes.SELECT },
  );
  return rows.map(toCall);
}

/** The calls of each of `scope_ids` (an empty list for a scope with none), in `scope_ids` order. */
export function groupCallsByScope<C extends { scope_id: string }>(calls: readonly C[], scope_ids: readonly string[]): Map<string, C[]> {
  const groups = new Map<string, C[]>(scope_ids.map((id) => [id, []]));
  for (const call of calls) groups.get(call.scope_id)?.push(call);
  return groups;
}
