import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_CONFIG_DIR, loadConfig } from '@agent-host/core';
import { buildOpenApiDocument, createServer, startHost, type RunningHost } from '@agent-host/host';
import { contractViolation, registerContract } from './contract.js';
import { chromaUrl, createTestDatabase } from './services.js';
import { stream } from './sse.js';

interface TapLike {
  teardown(fn: () => Promise<void> | void): void;
}

/** The first super admin every test host bootstraps. */
export const BOOTSTRAP_ADMIN = { username: 'root-admin', password: 'correct horse battery staple' };

/**
 * Starts a host in this process on a fresh database and the shared Chroma,
 * with `env` on top; stopped when the test ends.
 */
export async function startTestHost(
  t: TapLike,
  options: { env?: Record<string, string>; databaseUrl?: string } = {},
): Promise<RunningHost & { databaseUrl: string }> {
  const databaseUrl = options.databaseUrl ?? (await createTestDatabase(t));
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-data-'));
  const host = await startHost({
    env: {
      ...process.env,
      APP_ENV: 'test',
      DATABASE_URL: databaseUrl,
      CHROMA_URL: chromaUrl(),
      AGENT_HOST_DATA_DIR: dataDir,
      ADMIN_ACCESS_TOKEN_SECRET_KEY: 'test-signing-key-with-enough-entropy-0123456789',
      ADMIN_BOOTSTRAP_USERNAME: BOOTSTRAP_ADMIN.username,
      ADMIN_BOOTSTRAP_PASSWORD: BOOTSTRAP_ADMIN.password,
      ...options.env,
    },
  });
  t.teardown(() => host.stop());
  // Every response an AdminClient of this host receives is checked against the host's /openapi.json.
  registerContract(host.url, buildOpenApiDocument(createServer(host.app).routes));
  return { ...host, databaseUrl };
}

/** A TOML inline value (strings, numbers, booleans, tables, arrays), for config given through the environment. */
const tomlValue = (value: unknown): string =>
  Array.isArray(value)
    ? `[${value.map(tomlValue).join(', ')}]`
    : typeof value === 'object' && value !== null
      ? `{ ${Object.entries(value)
          .map(([k, v]) => `${k} = ${tomlValue(v)}`)
          .join(', ')} }`
      : JSON.stringify(value);

/**
 * Environment adding models of the `offline` provider to the default model catalog: only catalog models run, and
 * routing tests name several.
 */
export function offlineModelsEnv(...names: string[]): Record<string, string> {
  const { catalog } = loadConfig({ configDir: DEFAULT_CONFIG_DIR, env: {} }).models;
  const added = names.map((model_name) => ({
    model_name,
    model_provider: 'offline',
    display_name: '',
    description: 'a test model',
    category: 'test',
    options: {},
  }));
  return { AGENT_HOST__MODELS__CATALOG: tomlValue([...catalog, ...added]) };
}

/** GET a path of a running host as JSON. */
export async function getJson(host: RunningHost, pathname: string): Promise<{ status: number; body: any }> {
  const response = await fetch(host.url + pathname);
  return { status: response.status, body: await response.json() };
}

/** A cookie jar over fetch: keeps the Set-Cookie values a host sends, per name, honouring Path. */
export class AdminClient {
  readonly cookies = new Map<string, { value: string; path: string }>();
  constructor(readonly baseUrl: string) {}

  /** The Cookie header this client sends to `pathname` (also for WebSocket handshakes). */
  cookieHeader(pathname = '/'): string {
    return [...this.cookies]
      .filter(([, c]) => pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  }

  /** A JSON body, or a FormData one sent as multipart/form-data; a JSON answer is parsed, any other comes as text. */
  async request(method: string, pathname: string, body?: unknown, headers: Record<string, string> = {}) {
    const cookie = this.cookieHeader(pathname);
    const form = body instanceof FormData;
    const response = await fetch(this.baseUrl + pathname, {
      method,
      headers: { ...(body !== undefined && !form && { 'content-type': 'application/json' }), ...(cookie && { cookie }), ...headers },
      ...(body !== undefined && { body: form ? body : JSON.stringify(body) }),
    });
    for (const raw of response.headers.getSetCookie()) {
      const [pair, ...attributes] = raw.split(';').map((p) => p.trim());
      const [name, ...value] = pair!.split('=');
      const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? '/';
      if (/max-age=0/i.test(raw)) this.cookies.delete(name!);
      else this.cookies.set(name!, { value: value.join('='), path });
    }
    const text = await response.text();
    const contentType = response.headers.get('content-type');
    const parsed = text && contentType?.includes('json') ? JSON.parse(text) : text || undefined;
    const violation = contractViolation(this.baseUrl, method, pathname, response.status, contentType, parsed);
    if (violation) throw new Error(violation);
    return { status: response.status, body: parsed, headers: response.headers };
  }

  /** `POST /stream` as this administrator, who (holding conversations.write) may name the session. */
  stream(body: unknown, headers: Record<string, string> = {}) {
    return stream(this.baseUrl, body, { cookie: this.cookieHeader('/'), ...headers });
  }

  login(username = BOOTSTRAP_ADMIN.username, password = BOOTSTRAP_ADMIN.password) {
    return this.request('POST', '/admin/auth/login', { username, password });
  }
}
