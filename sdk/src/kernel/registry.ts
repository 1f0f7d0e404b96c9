import { PluginRefusedError } from '../errors.js';
import type { ExtensionRegistry } from '../extensions/registry.js';

interface Entry<T> {
  owner: string;
  value: T;
}

/** What the kernel hears of one plugin's registrations. */
export interface RegistrationListener {
  /** Every key the plugin registered, a replaceable default included (its manifest must declare each). */
  onRegister(key: string): void;
  /** A default of this plugin that plugin `by` replaces, now or when it registers later. */
  onReplaced?(key: string, by: string): void;
}

/**
 * One keyed registry behind an extension point, remembering who registered what. Replaceable defaults are kept apart
 * from the other registrations, so a key's implementation is the plugin's own, else the default, and a refused
 * plugin's registration falls back to the default it had replaced.
 */
export class KeyedRegistry<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private readonly defaults = new Map<string, Entry<T>>();
  private readonly revoked = new Set<string>();
  private readonly listeners = new Map<string, RegistrationListener>();

  constructor(readonly name: string) {}

  /** Drops what a refused plugin registered and refuses its later registrations (an init that went on past its deadline). */
  revoke(pluginId: string): void {
    this.revoked.add(pluginId);
    for (const map of [this.entries, this.defaults]) for (const [key, entry] of map) if (entry.owner === pluginId) map.delete(key);
  }

  /** The view one plugin gets: registrations are tagged with its id and reported to `listener`. */
  forPlugin(pluginId: string, listener: RegistrationListener): ExtensionRegistry<T> {
    this.listeners.set(pluginId, listener);
    return {
      register: (key, implementation, options) => {
        if (this.revoked.has(pluginId)) throw new PluginRefusedError(pluginId, 'init_failed', `registered ${this.name} "${key}" after it was refused`);
        if (typeof key !== 'string' || key.trim() === '') {
          throw new PluginRefusedError(pluginId, 'invalid_plugin', `registered an empty key in ${this.name}`);
        }
        const replaceable = options?.replaceable === true;
        const existing = (replaceable ? this.defaults : this.entries).get(key);
        if (existing) {
          const what = replaceable ? 'a replaceable default' : 'already registered';
          throw new PluginRefusedError(pluginId, 'duplicate_key', `${this.name} key "${key}" is ${what} by plugin "${existing.owner}"`);
        }
        (replaceable ? this.defaults : this.entries).set(key, { owner: pluginId, value: implementation });
        listener.onRegister(key);
        const fallback = this.defaults.get(key);
        const own = this.entries.get(key);
        if (fallback && own && fallback.owner !== own.owner) this.listeners.get(fallback.owner)?.onReplaced?.(key, own.owner);
      },
    };
  }

  private entry(key: string): Entry<T> | undefined {
    return this.entries.get(key) ?? this.defaults.get(key);
  }

  get(key: string): T | undefined {
    return this.entry(key)?.value;
  }

  has(key: string): boolean {
    return this.entry(key) !== undefined;
  }

  ownerOf(key: string): string | undefined {
    return this.entry(key)?.owner;
  }

  /** Each key once, with the implementation that serves it (a plugin's own before a default). */
  list(): { key: string; owner: string; value: T }[] {
    const keys = new Set([...this.entries.keys(), ...this.defaults.keys()]);
    return [...keys].map((key) => ({ key, ...this.entry(key)! }));
  }
}
