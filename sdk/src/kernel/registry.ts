import { PluginRefusedError } from '../errors.js';
import type { ExtensionRegistry } from '../extensions/registry.js';

/** One keyed registry behind an extension point, remembering who registered what. */
export class KeyedRegistry<T> {
  private readonly entries = new Map<string, { owner: string; value: T }>();
  private readonly revoked = new Set<string>();

  constructor(readonly name: string) {}

  /** Drops what a refused plugin registered and refuses its later registrations (an init that went on past its deadline). */
  revoke(pluginId: string): void {
    this.revoked.add(pluginId);
    for (const [key, entry] of this.entries) if (entry.owner === pluginId) this.entries.delete(key);
  }

  /** The view one plugin gets: registrations are tagged with its id. */
  forPlugin(pluginId: string, onRegister: (key: string) => void): ExtensionRegistry<T> {
    return {
      register: (key, implementation) => {
        if (this.revoked.has(pluginId)) throw new PluginRefusedError(pluginId, 'init_failed', `registered ${this.name} "${key}" after it was refused`);
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
