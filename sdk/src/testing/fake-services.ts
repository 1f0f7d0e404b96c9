import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { NotFoundError } from '../errors.js';
import { assertObjectKey, objectStoreProxyDownload } from '../extensions/object-stores.js';
import type {
  AuditEvent,
  AuditWriter,
  ConfigService,
  HealthCheckResult,
  HttpClient,
  HttpStreamRequestOptions,
  HttpStreamResponse,
  JobRun,
  JobScheduler,
  Logger,
  ModelCallUsage,
  ObjectStore,
  SecretsService,
  StoredObjectInfo,
  UsageRecorder,
  UsageScope,
} from '../services/index.js';

/** One line a plugin logged through the test kernel's logger. @beta */
export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  /** The bindings of its logger (`plugin`, and any child's) and the object logged. */
  fields: Record<string, unknown>;
}

export function memoryLogger(records: LogRecord[], bindings: Record<string, unknown> = {}): Logger {
  const line = (level: LogRecord['level']) => (obj: object | string, msg?: string) =>
    void records.push(typeof obj === 'string' ? { level, msg: obj, fields: { ...bindings } } : { level, msg: msg ?? '', fields: { ...bindings, ...obj } });
  return {
    debug: line('debug'),
    info: line('info'),
    warn: line('warn'),
    error: line('error'),
    child: (more) => memoryLogger(records, { ...bindings, ...more }),
  };
}

export function fixedConfig(sections: Readonly<Record<string, Readonly<Record<string, unknown>>>>): ConfigService {
  return { appEnv: 'test', section: (name) => sections[name] };
}

/** Real AES-256-GCM under a key made per test kernel, so a plugin's round trips and context binding are exercised. */
export function ephemeralSecrets(): SecretsService {
  const key = randomBytes(32);
  return {
    encrypt(plaintext, context = '') {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(Buffer.from(context));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['test', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join(':');
    },
    decrypt(ciphertext, context = '') {
      const [, iv, tag, body] = ciphertext.split(':');
      if (!iv || !tag || body === undefined) throw new Error('not a ciphertext of this secrets service');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64')).setAAD(Buffer.from(context));
      decipher.setAuthTag(Buffer.from(tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
    },
  };
}

export function recordingAudit(events: AuditEvent[], pluginId: string): AuditWriter {
  return { write: async (event) => void events.push({ actor_id: pluginId, ...event }) };
}

export function recordingUsage(records: { scope: UsageScope; usage: ModelCallUsage }[]): UsageRecorder {
  return {
    record: async (scope, usage) => void records.push({ scope, usage }),
    // About four characters a token, as the host's estimate is for English text; enough for a plugin's arithmetic.
    estimateTokens: (text) => Math.ceil(text.length / 4),
  };
}

/** An object store in memory, with the key rules and proxy downloads of the host's local store. */
export function memoryObjectStore(): ObjectStore {
  const objects = new Map<string, { data: Uint8Array; info: StoredObjectInfo }>();
  const put = async (key: string, data: Uint8Array, options: { contentType: string }) => {
    assertObjectKey(key);
    const info = { key, size: data.byteLength, content_type: options.contentType };
    objects.set(key, { data: Uint8Array.from(data), info });
    return info;
  };
  return {
    put,
    async putStream(key, body, options) {
      const parts: Uint8Array[] = [];
      for await (const part of body) parts.push(part);
      return put(key, Buffer.concat(parts), options);
    },
    async get(key) {
      assertObjectKey(key);
      const found = objects.get(key);
      if (!found) throw new NotFoundError(`object "${key}" not found`, { code: 'OBJECT_NOT_FOUND' });
      return { data: Uint8Array.from(found.data), info: found.info };
    },
    delete: async (key) => void objects.delete(key),
    exists: async (key) => objects.has(key),
    describeDownload: async (key) => objectStoreProxyDownload(key, 'the test kernel keeps objects in memory'),
  };
}

/** What a plugin asked the fake scheduler to do. @beta */
export interface JobRecord {
  id: string;
  name: string;
  data: unknown;
  when: 'now' | Date | string;
  repeat?: string;
  state: 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
  error?: string;
}

/** Jobs in memory: `now` runs the handler at once (await {@link TestKernel.settled}); scheduled runs only queue. */
export function memoryJobs(records: JobRecord[], pending: Set<Promise<void>>, pluginId: string): JobScheduler {
  const handlers = new Map<string, (job: JobRun<unknown>) => Promise<void>>();
  const queue = (name: string, data: unknown, when: JobRecord['when'], repeat?: string): JobRecord => {
    const record: JobRecord = { id: randomUUID(), name: `${pluginId}.${name}`, data, when, state: 'queued', ...(repeat && { repeat }) };
    records.push(record);
    return record;
  };
  return {
    define: (name, handler) => void handlers.set(name, handler as (job: JobRun<unknown>) => Promise<void>),
    async now(name, data) {
      const handler = handlers.get(name);
      if (!handler) throw new Error(`job "${name}" has no handler: define it in init`);
      const record = queue(name, data, 'now');
      record.state = 'running';
      const run = handler({ id: record.id, name: record.name, data, touch: async () => undefined }).then(
        () => void (record.state = 'succeeded'),
        (error: unknown) => void Object.assign(record, { state: 'failed', error: error instanceof Error ? error.message : String(error) }),
      );
      pending.add(run);
      void run.finally(() => pending.delete(run));
      return record.id;
    },
    schedule: async (when, name, data) => queue(name, data, when).id,
    async every(interval, name, data) {
      for (const old of records.filter((r) => r.name === `${pluginId}.${name}` && r.repeat && r.state === 'queued')) old.state = 'cancelled';
      return queue(name, data, 'now', interval).id;
    },
    async cancel(name, data) {
      const matches = records.filter(
        (r) =>
          r.name === `${pluginId}.${name}` &&
          r.state === 'queued' &&
          Object.entries(data ?? {}).every(([k, v]) => (r.data as Record<string, unknown>)?.[k] === v),
      );
      for (const match of matches) match.state = 'cancelled';
      return matches.length;
    },
  };
}

/**
 * Plain `fetch` with a timeout. `fetchUntrusted` does not filter addresses here: a test talks to its own fixtures.
 * `request` reads the same `fetch` response into a Node stream.
 */
export function plainHttp(defaultTimeoutMs: number): HttpClient {
  const fetchWithin = (url: string | URL, options: { timeoutMs?: number } & RequestInit = {}) => {
    const { timeoutMs = defaultTimeoutMs, ...init } = options;
    const signals = [init.signal, Number.isFinite(timeoutMs) ? AbortSignal.timeout(timeoutMs) : undefined].filter((s): s is AbortSignal => !!s);
    return fetch(url, { ...init, ...(signals.length && { signal: AbortSignal.any(signals) }) });
  };
  const request = async (url: string | URL, options: HttpStreamRequestOptions = {}): Promise<HttpStreamResponse> => {
    const response = await fetchWithin(url, options);
    const body = response.body ? Readable.fromWeb(response.body as NodeReadableStream) : Readable.from([]);
    const whole = async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
      return Buffer.concat(chunks);
    };
    const readable = Object.assign(body, {
      text: async () => (await whole()).toString('utf8'),
      json: async () => JSON.parse((await whole()).toString('utf8')) as unknown,
      arrayBuffer: async () => new Uint8Array(await whole()).buffer,
    });
    return { status: response.status, headers: response.headers, url: String(url), body: readable };
  };
  return { fetch: fetchWithin, fetchUntrusted: fetchWithin, request };
}

export type HealthCheck = () => Promise<HealthCheckResult>;
