import { MongoBackend } from '@agendajs/mongo-backend';
import { PostgresBackend } from '@agendajs/postgres-backend';
import { Agenda, type AgendaBackend } from 'agenda';
import type { HostConfig } from '../config/schema.js';

/**
 * Agenda on the configured job store: the core Postgres by default, or
 * MongoDB when `[jobs] backend = "mongodb"`.
 */
export function createAgenda(config: HostConfig, databaseUrl: string, instanceId: string): { agenda: Agenda; backend: AgendaBackend } {
  const { jobs } = config;
  if (jobs.backend === 'mongodb') {
    if (!jobs.mongodb_url) throw new Error('[jobs] backend = "mongodb" needs [jobs].mongodb_url (or MONGODB_URL)');
    const backend = new MongoBackend({ address: jobs.mongodb_url });
    return { backend, agenda: new Agenda({ name: instanceId, backend, processEvery: jobs.process_every }) };
  }
  const backend = new PostgresBackend({ poolConfig: { connectionString: databaseUrl, max: 4 } });
  return { backend, agenda: new Agenda({ name: instanceId, backend, processEvery: jobs.process_every }) };
}
