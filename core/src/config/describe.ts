import path from 'node:path';
import { redactUrl } from '../db/database.js';
import { leafPaths, loadConfigWithSources, productionGuardProblems, type LoadConfigOptions } from './load.js';

/** One line of `agent-host config check`. */
export interface ConfigEntry {
  key: string;
  value: unknown;
  /** The file or environment variable that set it, or `default` for the schema's default. */
  source: string;
}

// Names whose values are secrets; `*_env` keys name a variable and are not secret themselves.
const SECRET_KEY = /(^|_)(key|secret|password|token)$|encrypted/;

function masked(key: string, value: unknown): unknown {
  const name = key.split('.').at(-1)!;
  if (typeof value === 'string' && SECRET_KEY.test(name)) return value === '' ? '' : '***';
  if (typeof value === 'string' && name.endsWith('url') && /^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return redactUrl(value);
  if (Array.isArray(value)) return value.map((item) => (item && typeof item === 'object' ? maskTable(key, item as Record<string, unknown>) : item));
  return value;
}

function maskTable(prefix: string, table: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(table).map(([key, value]) => [
      key,
      value && typeof value === 'object' && !Array.isArray(value)
        ? maskTable(`${prefix}.${key}`, value as Record<string, unknown>)
        : masked(`${prefix}.${key}`, value),
    ]),
  );
}

/**
 * The effective configuration, key by key, with where each value came from and secrets masked, plus the
 * production guards' problems. Reads files and the environment only: no database, no plugins.
 */
export function describeConfig(options: LoadConfigOptions): { entries: ConfigEntry[]; problems: string[] } {
  const { config, sources } = loadConfigWithSources(options);
  const table = config as unknown as Record<string, unknown>;
  const entries = leafPaths(table).map((key) => {
    const value = key.split('.').reduce<unknown>((node, part) => (node as Record<string, unknown>)[part], table);
    const source = sources.get(key) ?? 'default';
    // Files inside the working directory are named relative to it, as an operator would type them.
    const shown = path.isAbsolute(source) && !path.relative(process.cwd(), source).startsWith('..') ? path.relative(process.cwd(), source) : source;
    return { key, value: masked(key, value), source: shown };
  });
  return { entries, problems: productionGuardProblems(config) };
}
