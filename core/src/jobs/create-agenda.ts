import { MongoBackend } from '@agendajs/mongo-backend';
import { PostgresBackend } from '@agendajs/postgres-backend';
import { Agenda } from 'agenda';
import type { HostConfig } from '../config/schema.js';

/**
 * Agenda on the configured job store: the core Postgres by default, or
 * MongoDB when `[jobs] backend = "mongodb"`.
 */
export function createAgenda(config: HostConfig, databaseUrl: string, instanceId: string): Agenda {
  const { jobs } = config;
  if (jobs.backend === 'mongodb') {
    if (!jobs.mongodb_url) throw new Error('[jobs] backend = "mongodb" needs [jobs].mongodb_url (or MONGODB_URL)');
    return new Agenda({
      name: instanceId,
      backend: new MongoBackend({ address: jobs.mongodb_url }),
      processEvery: jobs.process_every,
    });
  }
  return new Agenda({
    name: instanceId,
    backend: new PostgresBackend({ poolConfig: { connectionString: databaseUrl, max: 4 } }),
    processEvery: jobs.process_every,
  });
}
