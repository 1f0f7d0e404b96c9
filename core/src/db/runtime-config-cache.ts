import type { Logger } from '@agent-host/sdk';
import pg from 'pg';
import type { Sequelize, Transaction } from 'sequelize';

/**
 * The tables a chat turn reads its agent's runtime configuration from (the agent, its knowledge, skill and MCP mounts
 * with what they join). A trigger on each (migration 0035) notifies {@link RUNTIME_CONFIG_CHANNEL} on every change.
 */
export const RUNTIME_CONFIG_TABLES = [
  'agents',
  'knowledge_mounts',
  'knowledge_sources',
  'agent_skill_mounts',
  'skills',
  'skill_versions',
  'agent_mcp_mounts',
  'mcp_servers',
] as const;

export const RUNTIME_CONFIG_CHANNEL = 'agent_host_runtime_config';

/** Entries beyond this drop the oldest: a few per agent, so thousands of agents stay cached. */
const MAX_ENTRIES = 20_000;
const RECONNECT_MS = { first: 500, max: 10_000 };
/** Which of the tables have the change trigger of migration 0035. */
const TRIGGERED_TABLES = `SELECT c.relname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
  WHERE c.relname = ANY($1) AND t.tgname = c.relname || '_runtime_config_changed' AND c.relnamespace = to_regnamespace(current_schema())`;

/**
 * The runtime configuration of agents, read by chat turns without a round trip in the common case (issue 25).
 * Any change to {@link RUNTIME_CONFIG_TABLES}, from any instance or by hand in SQL, clears it: a statement trigger
 * notifies, and every instance LISTENs. The instance that made the change also clears it as its transaction commits,
 * so its own next turn never waits for the notification. Until its LISTEN is in place, and from a lost connection
 * until it is back, the cache is bypassed: every read goes to the database, as without a cache. Values are frozen:
 * a turn that changed one would change it for the next.
 */
export class RuntimeConfigCache {
  private readonly entries = new Map<string, Promise<unknown>>();
  private live = false;
  private client?: pg.Client;
  private closed = false;
  private reconnect?: NodeJS.Timeout;

  /** Whether reads are cached: listening, with every table triggered. */
  get listening(): boolean {
    return this.live;
  }

  /** The value under `key`, loaded by `load` when absent. A failed load is not kept. */
  read<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (!this.live) return load();
    const hit = this.entries.get(key);
    if (hit) return hit as Promise<T>;
    const loading = load().then(deepFreeze);
    this.entries.set(key, loading);
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    loading.catch(() => {
      if (this.entries.get(key) === loading) this.entries.delete(key);
    });
    return loading;
  }

  /** Forgets every value; a load already under way is not kept either (its entry is gone). */
  invalidate(): void {
    this.entries.clear();
  }

  /** Clears the cache once `transaction` commits (a rollback changed nothing). */
  changed(transaction: Transaction): void {
    transaction.afterCommit(() => this.invalidate());
  }

  /** LISTENs on a connection of its own; resolves once listening. Reconnects on its own when the connection is lost. */
  async listen(connectionString: string, logger: Logger): Promise<void> {
    let delay = RECONNECT_MS.first;
    const connect = async (): Promise<void> => {
      const client = new pg.Client({ connectionString, application_name: 'agent-host runtime config' });
      this.client = client;
      const lost = (error?: Error) => {
        if (this.client !== client) return;
        this.client = undefined;
        this.live = false;
        this.invalidate();
        client.end().catch(() => undefined);
        if (this.closed) return;
        logger.warn({ err: error?.message, retry_ms: delay }, 'runtime config listener lost its connection; turns read the database until it is back');
        this.reconnect = setTimeout(() => {
          connect().then(
            () => logger.info('runtime config listener reconnected'),
            () => undefined,
          );
        }, delay);
        this.reconnect.unref();
        delay = Math.min(delay * 2, RECONNECT_MS.max);
      };
      client.on('error', lost);
      client.on('end', () => lost());
      client.on('notification', () => this.invalidate());
      let triggered: string[];
      try {
        await client.connect();
        await client.query(`LISTEN ${RUNTIME_CONFIG_CHANNEL}`);
        triggered = (await client.query<{ relname: string }>(TRIGGERED_TABLES, [RUNTIME_CONFIG_TABLES])).rows.map((r) => r.relname);
      } catch (error) {
        lost(error as Error);
        throw error;
      }
      const silent = RUNTIME_CONFIG_TABLES.filter((table) => !triggered.includes(table));
      if (silent.length) {
        // A change to such a table would notify nobody (a migration not applied yet): no cache is safer than a stale one.
        logger.warn({ tables: silent }, 'runtime config tables without a change trigger; turns read their configuration from the database');
        this.closed = true;
        this.client = undefined;
        await client.end().catch(() => undefined);
        return;
      }
      // Changes made while nobody listened are unknown: start empty.
      this.invalidate();
      this.live = true;
      delay = RECONNECT_MS.first;
    };
    await connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.live = false;
    clearTimeout(this.reconnect);
    const client = this.client;
    this.client = undefined;
    this.invalidate();
    await client?.end().catch(() => undefined);
  }
}

const caches = new WeakMap<Sequelize, RuntimeConfigCache>();

/**
 * The cache of the database `db` opens: one per database handle, so each store that writes a runtime-config table
 * reaches the cache its turns read through the handle it already holds.
 */
export function runtimeConfigCache(db: Sequelize): RuntimeConfigCache {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new RuntimeConfigCache()));
  return cache;
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const child of Object.values(value as object)) deepFreeze(child);
  return value;
}
