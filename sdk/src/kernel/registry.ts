import { PluginRefusedError } from '../errors.js';
import type { ExtensionRegistry } from '../extensions/registry.js';

/** One keyed registry behind an extension point, remembering who registered what. */
export class KeyedRegistry<T> {
  private readonly entries = new Map<string, { owner: string; value: T }>();

  constructor(readonly name: string) {}

  /** The view one plugin gets: registrations are tagged with its id. */
  forPlugin(pluginId: string, onRegister: (key: string) => void): ExtensionRegistry<T> {
    return {
      register: (key, implementation) => {
        if (typeof key !== 'string' || key.trim() === '') {
          throw new PluginRefusedError(pluginId, 'invalid_plugin', `registered an empty key in ${this.name}`);
        }
        const existing = this.entries.get(key);
        if (existing) {
          throw new PluginRefusedError(pluginId, 'duplicate_key', `${this.name} key "${key}" is already registered by plugin "${existing.owner}"`);
        }
        this.entries.set(key, { owner: pluginId, value: implementation });
        onRegister(key);
      },
    };
  }

  get(key: string): T | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  ownerOf(key: string): string | undefined {
    return this.entries.get(key)?.owner;
  }

  /** Entries in registration order. */
  list(): { key: string; owner: string; value: T }[] {
    return [...this.entries].map(([key, entry]) => ({ key, ...entry }));
  }
}
