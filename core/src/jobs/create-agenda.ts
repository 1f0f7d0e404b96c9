import { MongoBackend } from '@agendajs/mongo-backend';
import { PostgresBackend } from '@agendajs/postgres-backend';
import type { AgendaBackend } from 'agenda';
import type { HostConfig } from '../config/schema.js';
import { HostAgenda } from './host-agenda.js';
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
 * MongoDB when `[jobs] backend = "mongodb"`.
 */
export function createAgenda(config: HostConfig, databaseUrl: string, instanceId: string): { agenda: HostAgenda; backend: AgendaBackend } {
  const { jobs } = config;
  const processEvery = parseProcessEvery(jobs.process_every);
  let backend: AgendaBackend;
  if (jobs.backend === 'mongodb') {
    if (!jobs.mongodb_url) throw new Error('[jobs] backend = "mongodb" needs [jobs].mongodb_url (or MONGODB_URL)');
    backend = new MongoBackend({ address: jobs.mongodb_url });
  } else {
    backend = new PostgresBackend({ poolConfig: { connectionString: databaseUrl, max: 4 } });
  }
  return { backend, agenda: new HostAgenda({ name: instanceId, backend, processEvery }) };
}
