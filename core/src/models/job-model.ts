import type { AgentSnapshot, ModelProvider } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { TurnModelRouter } from '../chat/model-router.js';
import type { HostConfig } from '../config/schema.js';

/** The model a job (a Fusion run, an ETL job) is bound to, resolved when it is made, and where it came from. */
export interface ModelBinding {
  model_name: string;
  model_provider: string;
  model_temperature: number;
  /** `agent`: the agent's own model; `global_fallback`: the global model's provider and name. */
  source: 'agent' | 'global_fallback';
}

/**
 * A job's binding (spec 4.11): the agent's own model, else the provider and name of the global model, never a
 * temperature from it; with no temperature anywhere, 0.
 */
export function jobModelBinding(
  agent: { model_name: string | null; model_provider: string | null; model_temperature: number | null },
  config: HostConfig,
): ModelBinding {
  const own = Boolean(agent.model_name && agent.model_provider);
  return {
    model_name: own ? agent.model_name! : config.models.default_model_name,
    model_provider: own ? agent.model_provider! : config.models.default_model_provider,
    model_temperature: agent.model_temperature ?? 0,
    source: own ? 'agent' : 'global_fallback',
  };
}

/** The bound model, through the turn's router, so its calls are counted and priced like a turn's. */
export function jobModelRouter(binding: ModelBinding, config: HostConfig, providers: KeyedRegistry<ModelProvider>): TurnModelRouter {
  const snapshot = { ...binding, model_routing_config: null } as unknown as AgentSnapshot;
  return new TurnModelRouter(snapshot, null, config, providers, { message: '' });
}
