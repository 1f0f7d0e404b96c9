import type { ModelAvailability, ModelProvider } from '@agent-host/sdk';
import type { HostConfig } from '../config/schema.js';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';

/** `GET /models`: the configured catalog, with defaults and provider availability. */
export function listModels(config: HostConfig, providers: KeyedRegistry<ModelProvider>) {
  const { default_model_provider, default_model_name, catalog } = config.models;
  return {
    default_model: { model_provider: default_model_provider, model_name: default_model_name },
    models: catalog.map((model) => {
      const provider = providers.get(model.model_provider);
      const availability: ModelAvailability = !provider
        ? { available: false, reason: `no enabled plugin provides model_provider "${model.model_provider}"` }
        : (provider.availability?.({
            model_name: model.model_name,
            temperature: null,
            timeoutMs: config.timeouts.model_request_seconds * 1000,
            options: model.options,
          }) ?? { available: true });
      return {
        model_name: model.model_name,
        model_provider: model.model_provider,
        display_name: model.display_name || model.model_name,
        description: model.description,
        category: model.category,
        is_default: model.model_provider === default_model_provider && model.model_name === default_model_name,
        /** False when no enabled plugin provides this `model_provider`, or the provider cannot call it as configured. */
        available: availability.available,
        /** Why not, when `available` is false (for example a missing API key). */
        unavailable_reason: availability.available ? null : availability.reason,
        /** True for deterministic providers that call no language model. */
        offline: provider?.offline ?? false,
      };
    }),
  };
}

/** What `GET /models?check=true` found for one model. */
export interface ModelCheck {
  ok: boolean;
  ms: number;
  error: string | null;
}

/**
 * `GET /models?check=true`: `listModels`, each available model also asked for a one-line answer under the model
 * timeout (capped at 15 s), so an administrator sees which models really answer. Unavailable models are not called.
 */
export async function checkModels(config: HostConfig, providers: KeyedRegistry<ModelProvider>) {
  const listed = listModels(config, providers);
  const timeoutMs = Math.min(config.timeouts.model_request_seconds * 1000, 15_000);
  const models = await Promise.all(
    listed.models.map(async (model) => {
      if (!model.available) return { ...model, check: null };
      const entry = config.models.catalog.find((m) => m.model_provider === model.model_provider && m.model_name === model.model_name);
      const chat = providers
        .get(model.model_provider)!
        .createChatModel({ model_name: model.model_name, temperature: 0, timeoutMs, options: entry?.options ?? {} });
      const started = Date.now();
      try {
        await chat.invoke([{ role: 'user', content: 'Reply with the single word OK.' }], { signal: AbortSignal.timeout(timeoutMs) });
        return { ...model, check: { ok: true, ms: Date.now() - started, error: null } satisfies ModelCheck };
      } catch (error) {
        return { ...model, check: { ok: false, ms: Date.now() - started, error: (error as Error).message } satisfies ModelCheck };
      }
    }),
  );
  return { ...listed, models };
}
