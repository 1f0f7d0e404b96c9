import type { Sequelize } from 'sequelize';
import type { UsageRecorder } from '@agent-host/sdk';
import { estimateTokens } from '../usage/token-estimate.js';
import { insertUsageEvent } from '../usage/usage-event-store.js';

/** Writes each model call's usage to `model_usage_events`. */
export function createUsageRecorder(sequelize: Sequelize, source: string): UsageRecorder {
  return {
    estimateTokens,
    record: (scope, usage) => insertUsageEvent(sequelize, scope, usage, source),
  };
}
