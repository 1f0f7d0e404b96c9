import os from 'node:os';
import type { Sequelize } from 'sequelize';

/** The SQL of `host_instances` (one row per host process that served this database) and the pool's liveness probe. */
export class HostInstanceStore {
  constructor(private readonly db: Sequelize) {}

  async started(instanceId: string, appEnv: string): Promise<void> {
    await this.db.query('INSERT INTO host_instances (id, hostname, pid, app_env, started_at) VALUES ($1, $2, $3, $4, now())', {
      bind: [instanceId, os.hostname(), process.pid, appEnv],
    });
  }

  async stopped(instanceId: string): Promise<void> {
    await this.db.query('UPDATE host_instances SET stopped_at = now() WHERE id = $1', { bind: [instanceId] });
  }

  /** Resolves once the database answers a trivial statement; rejects as the connection fails. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }
}
