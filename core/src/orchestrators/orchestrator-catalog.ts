import type { Orchestrator } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';

/** `GET /chat-orchestrators`: read from the registry; the default comes from `[agent].default_orchestrator_key`. */
export function listOrchestrators(registry: KeyedRegistry<Orchestrator>, defaultKey: string) {
  return {
    default_orchestrator_key: defaultKey,
    items: registry.list().map(({ key, owner, value }) => ({
      key,
      display_name: value.displayName,
      description: value.description,
      experimental: value.experimental,
      is_default: key === defaultKey,
      plugin_id: owner,
    })),
  };
}
