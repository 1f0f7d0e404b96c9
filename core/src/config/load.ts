import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import { ENV_BINDINGS, GENERIC_ENV_PREFIX, type EnvBinding } from './env.js';
import { configSchema, type HostConfig } from './schema.js';

/** Start-up refused because the configuration is invalid. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(`configuration invalid: ${message}`);
    this.name = 'ConfigError';
  }
}

export interface LoadConfigOptions {
  /** Directory holding `default.toml` and `<APP_ENV>.toml`. */
  configDir: string;
  env?: NodeJS.ProcessEnv;
  /** Extra TOML file merged after the environment file (also `AGENT_HOST_CONFIG`). */
  extraFile?: string;
}

type Table = Record<string, unknown>;

const isTable = (value: unknown): value is Table => typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);

/** Deep merge where later tables win key by key and arrays are replaced whole. */
export function mergeTables(base: Table, over: Table): Table {
  const out: Table = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] = isTable(current) && isTable(value) ? mergeTables(current, value) : value;
  }
  return out;
}

function readToml(file: string): Table {
  try {
    return parseToml(readFileSync(file, 'utf8')) as Table;
  } catch (error) {
    throw new ConfigError(`${file}: ${(error as Error).message}`);
  }
}

function coerce(binding: EnvBinding, raw: string): unknown {
  const value = raw.trim();
  switch (binding.type) {
    case 'string':
      return value;
    case 'boolean':
      if (/^(true|1|yes)$/i.test(value)) return true;
      if (/^(false|0|no|)$/i.test(value)) return false;
      throw new ConfigError(`${binding.env} must be true or false, got "${raw}"`);
    case 'integer':
    case 'number': {
      const n = Number(value);
      if (value === '' || !Number.isFinite(n) || (binding.type === 'integer' && !Number.isInteger(n))) {
        throw new ConfigError(`${binding.env} must be ${binding.type === 'integer' ? 'an integer' : 'a number'}, got "${raw}"`);
      }
      return n;
    }
    case 'list':
      return value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
  }
}

function setPath(table: Table, keys: readonly string[], value: unknown): void {
  let node = table;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    node = node[key] = isTable(next) ? { ...next } : {};
  }
  node[keys[keys.length - 1]!] = value;
}

/** `AGENT_HOST__SECTION__KEY=value`: the value is read as a TOML value, else as a string. */
function genericValue(raw: string): unknown {
  try {
    return (parseToml(`v = ${raw}`) as Table).v;
  } catch {
    return raw;
  }
}

/** The environment's overrides, and for each key it sets (dotted path) the variable that set it. */
function envOverrides(env: NodeJS.ProcessEnv, sources?: Map<string, string>): Table {
  const table: Table = {};
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined || !name.startsWith(GENERIC_ENV_PREFIX)) continue;
    const keys = name.slice(GENERIC_ENV_PREFIX.length).toLowerCase().split('__');
    if (keys.length < 2 || keys.some((k) => k === '')) {
      throw new ConfigError(`${name}: expected AGENT_HOST__<SECTION>__<KEY>`);
    }
    // Shells cannot export names with hyphens, and plugin ids are kebab-case with no underscores: read `_` as `-`.
    if (keys[0] === 'plugins' && keys.length > 2) keys[1] = keys[1]!.replaceAll('_', '-');
    setPath(table, keys, genericValue(raw));
    sources?.set(keys.join('.'), `env ${name}`);
  }
  for (const binding of ENV_BINDINGS) {
    const raw = env[binding.env];
    if (raw === undefined) continue;
    setPath(table, binding.path, coerce(binding, raw));
    sources?.set(binding.path.join('.'), `env ${binding.env}`);
  }
  return table;
}

function formatIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
}

/**
 * Reads `default.toml`, then `<APP_ENV>.toml`, then the extra file, then the
 * environment, and validates the result. Relative directories resolve
 * against the working directory.
 */
export function loadConfig(options: LoadConfigOptions): HostConfig {
  return loadConfigWithSources(options).config;
}

/**
 * {@link loadConfig}, also telling for each key that a file or the environment set (dotted path) where its value
 * came from; keys absent from the map have their schema default (`agent-host config check`).
 */
export function loadConfigWithSources(options: LoadConfigOptions): { config: HostConfig; sources: Map<string, string> } {
  const env = options.env ?? process.env;
  const defaults = path.join(options.configDir, 'default.toml');
  if (!existsSync(defaults)) throw new ConfigError(`${defaults} not found`);
  const sources = new Map<string, string>();
  const layer = (table: Table, source: string) => {
    for (const key of leafPaths(table)) sources.set(key, source);
    return table;
  };
  let merged = layer(readToml(defaults), defaults);
  const envSources = new Map<string, string>();
  const overrides = envOverrides(env, envSources);
  const appEnv = String((overrides.app as Table | undefined)?.env ?? (merged.app as Table | undefined)?.env ?? 'development');
  const envFile = path.join(options.configDir, `${appEnv}.toml`);
  if (existsSync(envFile)) merged = mergeTables(merged, layer(readToml(envFile), envFile));
  const extra = options.extraFile ?? env.AGENT_HOST_CONFIG;
  if (extra) {
    if (!existsSync(extra)) throw new ConfigError(`AGENT_HOST_CONFIG file ${extra} not found`);
    merged = mergeTables(merged, layer(readToml(extra), extra));
  }
  merged = mergeTables(merged, overrides);
  for (const [key, source] of envSources) sources.set(key, source);
  const parsed = configSchema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(formatIssues(parsed.error));
  return { config: parsed.data, sources };
}

/** Dotted paths of a table's values; arrays and arrays of tables (`[[models.catalog]]`) are one value each. */
export function leafPaths(table: Table, prefix = ''): string[] {
  return Object.entries(table).flatMap(([key, value]) => (isTable(value) ? leafPaths(value, `${prefix}${key}.`) : [`${prefix}${key}`]));
}

/**
 * Guards that refuse start-up in production (spec part 5.5). Returns the
 * problems; empty when the configuration may start.
 */
export function productionGuardProblems(config: HostConfig): string[] {
  if (config.app.env !== 'production') return [];
  const problems: string[] = [];
  if (config.admin.access_token_secret_key.trim() === '') {
    problems.push('ADMIN_ACCESS_TOKEN_SECRET_KEY must be set when APP_ENV=production');
  }
  if (!config.admin.access_cookie_secure) {
    problems.push('ADMIN_ACCESS_COOKIE_SECURE must be true when APP_ENV=production');
  }
  if (config.secrets.key.trim() === '') {
    problems.push('AGENT_HOST_SECRETS_KEY must be set when APP_ENV=production');
  }
  return problems;
}
