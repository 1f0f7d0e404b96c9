import type { AgendaBackend } from 'agenda';
import pg from 'pg';
import type { HostConfig } from '../config/schema.js';
import type { HostAgenda } from './host-agenda.js';
import { parseInterval } from './interval.js';

/**
 * `[jobs] process_every` in milliseconds (see {@link parseInterval}). Agenda
 * would read `"200 milliseconds"` as 200 s and fall back to 5 s, silently, on
 * text it cannot read; the host refuses to start instead.
 */
export function parseProcessEvery(text: string): number {
  const ms = parseInterval(text);
  if (ms === undefined || !Number.isFinite(ms) || ms < 1) {
    throw new Error(`[jobs] process_every = "${text}" is not an interval such as "2 seconds" or "200 milliseconds"`);
  }
  return Math.round(ms);
}

/**
 * Agenda on the configured job store: the core Postgres by default, or
 * MongoDB when `[jobs] backend = "mongodb"`. Agenda and the backend are loaded here, not at import: a process that
 * only imports core (a CLI command, a unit test) does not pay for the MongoDB driver.
 */
export async function createAgenda(
  config: HostConfig,
  databaseUrl: string,
  instanceId: string,
  onPoolError: (error: Error) => void,
): Promise<{ agenda: HostAgenda; backend: AgendaBackend; closePool: () => Promise<void> }> {
  const { jobs } = config;
  const processEvery = parseProcessEvery(jobs.process_every);
  let backend: AgendaBackend;
  let closePool = async () => {};
  if (jobs.backend === 'mongodb') {
    if (!jobs.mongodb_url) throw new Error('[jobs] backend = "mongodb" needs [jobs].mongodb_url (or MONGODB_URL)');
    const { MongoBackend } = await import('@agendajs/mongo-backend');
    backend = new MongoBackend({ address: jobs.mongodb_url });
  } else {
    // The host's own pool: the backend's would have no 'error' listener, so a Postgres restart would kill the host.
    const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
    pool.on('error', onPoolError);
    // The pool hears errors of idle clients only: a client the backend holds between statements (a job lock's
    // transaction) when Postgres goes away would emit an unheard 'error' and end the process. Its query fails anyway.
    pool.on('connect', (client) => client.on('error', onPoolError));
    closePool = () => pool.end();
    const { PostgresBackend } = await import('@agendajs/postgres-backend');
    const postgres = new PostgresBackend({ pool });
    // Its LISTEN channel reports a lost connection as an 'error' event before reconnecting; unheard, it would be fatal.
    (postgres.notificationChannel as unknown as NodeJS.EventEmitter | undefined)?.on('error', onPoolError);
    backend = postgres;
  }
  const { HostAgenda } = await import('./host-agenda.js');
  return { backend, closePool, agenda: new HostAgenda({ name: instanceId, backend, processEvery }) };
}
