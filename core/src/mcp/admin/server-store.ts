import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../../db/sql-store.js';
import { newestFirst } from '../../db/keyset-cursor.js';

export interface ServerRow {
  id: string;
  name: string;
  description: string;
  transport_type: string;
  connection_config: Record<string, unknown>;
  credential_schema: Record<string, unknown> | null;
  credential_id: string | null;
  status: 'active' | 'inactive' | 'error';
  last_health_check_at: Date | null;
  last_health_message: string | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns an administrator writes. */
export type ServerFields = Pick<ServerRow, 'name' | 'description' | 'transport_type' | 'connection_config' | 'credential_schema' | 'credential_id' | 'status'>;

const json = (value: unknown) => (value === undefined || value === null ? null : JSON.stringify(value));

/** The written columns in the order both statements bind them, after the id: name, description, ..., status. */
const written = (fields: ServerFields) => [
  fields.name,
  fields.description,
  fields.transport_type,
  JSON.stringify(fields.connection_config),
  json(fields.credential_schema),
  fields.credential_id,
  fields.status,
];

/** The SQL of tool servers: the `mcp_servers` table. Writes take the caller's transaction. */
export class ServerStore extends SqlStore {
  page<T>(page: { limit: number; cursor?: string }, present: (row: ServerRow) => T) {
    return newestFirst(this.db, { from: 'mcp_servers', where: 'true', bind: [] }, page, present);
  }

  async find(id: string): Promise<ServerRow | undefined> {
    const [row] = await this.db.query<ServerRow>('SELECT * FROM mcp_servers WHERE id = try_uuid($1)', { bind: [id], type: QueryTypes.SELECT });
    return row;
  }

  /** The server that already has `name` (in any letter case), other than `exceptId`. */
  async named(name: string, exceptId: string | null, transaction?: Transaction): Promise<string | undefined> {
    const [row] = await this.db.query<{ id: string }>('SELECT id FROM mcp_servers WHERE lower(name) = lower($1) AND ($2::text IS NULL OR id::text <> $2)', {
      bind: [name, exceptId],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row?.id;
  }

  async insert(id: string, fields: ServerFields, createdBy: string | null, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `INSERT INTO mcp_servers (id, name, description, transport_type, connection_config, credential_schema, credential_id, status, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())`,
      { bind: [id, ...written(fields), createdBy], transaction },
    );
  }

  async update(id: string, fields: ServerFields, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `UPDATE mcp_servers SET name = $2, description = $3, transport_type = $4, connection_config = $5, credential_schema = $6, credential_id = $7, status = $8, updated_at = now() WHERE id = $1`,
      { bind: [id, ...written(fields)], transaction },
    );
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('DELETE FROM mcp_servers WHERE id = $1', { bind: [id], transaction });
  }

  /** The agents a server is mounted on, oldest mount first. */
  async mountingAgents(id: string): Promise<string[]> {
    const rows = await this.db.query<{ agent_id: string }>('SELECT agent_id FROM agent_mcp_mounts WHERE mcp_server_id = $1 ORDER BY created_at', {
      bind: [id],
      type: QueryTypes.SELECT,
    });
    return rows.map((row) => row.agent_id);
  }

  /** A passing check makes an `error` server `active` again; an `inactive` one stays so. Resolves with the new status. */
  async recordHealth(id: string, ok: boolean, message: string, transaction: Transaction): Promise<ServerRow['status']> {
    this.runtimeConfigChanged(transaction);
    const [row] = await this.db.query<{ status: ServerRow['status'] }>(
      `UPDATE mcp_servers SET status = CASE WHEN status = 'inactive' THEN status WHEN $2 THEN 'active' ELSE 'error' END,
              last_health_check_at = now(), last_health_message = $3, updated_at = now() WHERE id = $1 RETURNING status`,
      { bind: [id, ok, message], type: QueryTypes.SELECT, transaction },
    );
    return row!.status;
  }

  /**
   * The server of a tool provider, made on first call (`created`), under `name`, or `fallbackName` when another
   * server has that name. Instances starting together take turns on a lock per provider.
   */
  ensureProviderServer(
    transport: string,
    provider: { key: string; name: string; fallbackName: string; description: string },
  ): Promise<{ id: string; created: boolean }> {
    return this.db.transaction(async (transaction) => {
      await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', { bind: [`${transport}:${provider.key}`], transaction });
      const [existing] = await this.db.query<{ id: string }>(
        `SELECT id FROM mcp_servers WHERE transport_type = $1 AND connection_config->>'provider' = $2 ORDER BY created_at LIMIT 1`,
        { bind: [transport, provider.key], type: QueryTypes.SELECT, transaction },
      );
      if (existing) return { id: existing.id, created: false };
      const taken = await this.named(provider.name, null, transaction);
      const id = randomUUID();
      const fields: ServerFields = {
        name: taken ? provider.fallbackName : provider.name,
        description: provider.description,
        transport_type: transport,
        connection_config: { provider: provider.key },
        credential_schema: null,
        credential_id: null,
        status: 'active',
      };
      await this.insert(id, fields, null, transaction);
      return { id, created: true };
    });
  }
}
