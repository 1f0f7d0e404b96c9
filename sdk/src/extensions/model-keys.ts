// The API key rules of the model catalog, shared by every provider plugin that calls a hosted model: a catalog entry
// names its key source (`options.api_key_encrypted`, `options.api_key_env`), else the provider's default variable.
import type { Logger } from '../services/logger.js';
import type { SecretsService } from '../services/secrets.js';
import type { ChatModel, ChatModelSpec, ModelAvailability } from './models.js';

/** Where a provider finds the API key of a catalog entry. @public */
export interface ModelKeySource {
  /** The entry's key, usually {@link catalogApiKey}; throws when a source the entry names fails. */
  apiKey?: (spec: ChatModelSpec) => string | undefined;
  /** The variable `apiKey` reads when the entry names no key source, named in the reason a model is unavailable. */
  apiKeyEnv?: string;
  /** Where a call that has no usable key is warned about (never with the key). */
  log: Logger;
}

const keyError = (spec: ChatModelSpec, why: string) => new Error(`model ${spec.model_name}: ${why}`);

/** A key option of a catalog entry: absent, or a non-empty string. */
function keyOption(spec: ChatModelSpec, name: 'api_key_encrypted' | 'api_key_env'): string | undefined {
  const value = spec.options[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw keyError(spec, `options.${name} must be a non-empty string`);
  return value;
}

/**
 * A catalog entry's API key, first of: `options.api_key_encrypted` (decrypted with the host's secrets key), the
 * variable named by `options.api_key_env`, the provider's default variable `defaultEnv`. A source the entry names must
 * give a key, so a bad ciphertext or an unset variable throws, naming the model and the option but never the key; an
 * unset default variable gives no key, for endpoints that need none.
 * @public
 */
export function catalogApiKey(spec: ChatModelSpec, secrets: SecretsService, defaultEnv: string): string | undefined {
  const encrypted = keyOption(spec, 'api_key_encrypted');
  if (encrypted !== undefined) {
    try {
      return secrets.decrypt(encrypted);
    } catch (error) {
      throw keyError(
        spec,
        `options.api_key_encrypted cannot be decrypted with this host's secrets key (${(error as Error).message}); make it with \`agent-host secrets encrypt\``,
      );
    }
  }
  const envName = keyOption(spec, 'api_key_env');
  if (envName === undefined) return process.env[defaultEnv] || undefined;
  const key = process.env[envName];
  if (!key) throw keyError(spec, `options.api_key_env names the environment variable ${envName}, which is not set`);
  return key;
}

/**
 * Whether `spec` has the API key its endpoint needs, without calling it: a key source the entry names must give one;
 * otherwise the provider's default variable must be set when `keyRequired` (a hosted API), and may be unset for a
 * local endpoint that takes none.
 * @public
 */
export function catalogKeyAvailability(spec: ChatModelSpec, source: ModelKeySource, keyRequired: boolean): ModelAvailability {
  try {
    if (source.apiKey?.(spec) !== undefined || !keyRequired) return { available: true };
  } catch (error) {
    return { available: false, reason: (error as Error).message };
  }
  return {
    available: false,
    reason: `no API key: set ${source.apiKeyEnv ?? "the provider's key variable"}, or the entry's options.api_key_env or options.api_key_encrypted`,
  };
}

/**
 * `build(key)` with the API key of `spec`. When the entry's key source fails, a model whose every call rejects with
 * why: the turn reports it in its error event, and the host keeps serving the other models.
 * @public
 */
export function withCatalogApiKey(provider: string, spec: ChatModelSpec, source: ModelKeySource, build: (apiKey: string | undefined) => ChatModel): ChatModel {
  let apiKey: string | undefined;
  try {
    apiKey = source.apiKey?.(spec);
  } catch (error) {
    const reason = error as Error;
    const fail = () => {
      source.log.warn({ provider, model: spec.model_name, err: reason.message }, 'model has no usable API key');
      return reason;
    };
    return {
      provider,
      modelName: spec.model_name,
      // eslint-disable-next-line require-yield -- a stream that fails at its first read, as a keyless provider's would
      async *stream() {
        throw fail();
      },
      async invoke() {
        throw fail();
      },
    };
  }
  return build(apiKey);
}
