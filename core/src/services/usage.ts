import { getEncoding, type Tiktoken } from 'js-tiktoken';
import type { Sequelize } from 'sequelize';
import type { UsageRecorder } from '@agent-host/sdk';
import { insertUsageEvent } from '../usage/usage-event-store.js';

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
    record: (scope, usage) => insertUsageEvent(sequelize, scope, usage, source),
  };
}
