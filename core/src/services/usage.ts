import { getEncoding, type Tiktoken } from 'js-tiktoken';
import type { Sequelize } from 'sequelize';
import type { UsageRecorder } from '@agent-host/sdk';

let encoder: Tiktoken | undefined;

/** Local token estimate with the cl100k ranks js-tiktoken ships (offline). */
export function estimateTokens(text: string): number | undefined {
  try {
    encoder ??= getEncoding('cl100k_base');
    return encoder.encode(text).length;
  } catch {
    return undefined;
  }
}

/** Writes each model call's usage to `model_usage_events`. */
export function createUsageRecorder(sequelize: Sequelize, source: string): UsageRecorder {
  return {
    estimateTokens,
    async record(scope, usage) {
      await sequelize.query(
        `INSERT INTO model_usage_events
           (scope_kind, scope_id, model_provider, model_name, input_tokens, output_tokens, token_usage_source, source, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, now())`,
        {
          bind: [scope.scope_kind, scope.scope_id, usage.model_provider, usage.model_name, usage.input_tokens, usage.output_tokens, usage.source, source],
        },
      );
    },
  };
}
