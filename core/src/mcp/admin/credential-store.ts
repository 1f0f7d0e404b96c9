import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../../db/sql-store.js';
import { newestFirst } from '../../db/keyset-cursor.js';

export interface CredentialRow {
  id: string;
  name: string;
  description: string;
  scope: 'shared' | 'server';
  mcp_server_id: string | null;
  encrypted_secret_json: string;
  secret_keys: string[];
  allowed_destinations: string[];
  rotated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** The columns an administrator writes, the ciphertext aside. */
export type CredentialFields = Pick<CredentialRow, 'name' | 'description' | 'scope' | 'mcp_server_id' | 'allowed_destinations'>;

/** A server that uses a credential, with each of its mounts (`mount_id` null for a server mounted nowhere). */
export interface CredentialUse {
  mcp_server_id: string;
  server_name: string;
  mount_id: string | null;
  agent_id: string | null;
}

/** The SQL of tool server credentials: the `mcp_credentials` table and which servers use each. */
export class CredentialStore extends SqlStore {
  page<T>(page: { limit: number; cursor?: string }, present: (row: CredentialRow) => T) {
    return newestFirst(this.db, { from: 'mcp_credentials', where: 'true', bind: [] }, page, present);
  }

  async find(id: string): Promise<CredentialRow | undefined> {
    const [row] = await this.db.query<CredentialRow>('SELECT * FROM mcp_credentials WHERE id = try_uuid($1)', { bind: [id], type: QueryTypes.SELECT });
    return row;
  }

  async serverExists(serverId: string): Promise<boolean> {
    const [row] = await this.db.query('SELECT 1 FROM mcp_servers WHERE id = try_uuid($1)', { bind: [serverId], type: QueryTypes.SELECT });
    return row !== undefined;
  }

  async insert(
    id: string,
    fields: CredentialFields & { ciphertext: string; secret_keys: string[] },
    createdBy: string | null,
    transaction: Transaction,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO mcp_credentials (id, name, description, scope, mcp_server_id, encrypted_secret_json, secret_keys, allowed_destinations, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())`,
      {
        bind: [
          id,
          fields.name,
          fields.description,
          fields.scope,
          fields.mcp_server_id,
          fields.ciphertext,
          JSON.stringify(fields.secret_keys),
          JSON.stringify(fields.allowed_destinations),
          createdBy,
        ],
        transaction,
      },
    );
  }

  async update(id: string, fields: CredentialFields, transaction: Transaction): Promise<void> {
    await this.db.query(
      'UPDATE mcp_credentials SET name = $2, description = $3, scope = $4, mcp_server_id = $5, allowed_destinations = $6, updated_at = now() WHERE id = $1',
      { bind: [id, fields.name, fields.description, fields.scope, fields.mcp_server_id, JSON.stringify(fields.allowed_destinations)], transaction },
    );
  }

  async replaceSecret(id: string, ciphertext: string, secretKeys: string[], transaction: Transaction): Promise<void> {
    await this.db.query('UPDATE mcp_credentials SET encrypted_secret_json = $2, secret_keys = $3, rotated_at = now(), updated_at = now() WHERE id = $1', {
      bind: [id, ciphertext, JSON.stringify(secretKeys)],
      transaction,
    });
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    await this.db.query('DELETE FROM mcp_credentials WHERE id = $1', { bind: [id], transaction });
  }

  /** The servers that use the credential, by name, other than `exceptServerId`. */
  users(id: string, exceptServerId: string | null = null, transaction?: Transaction): Promise<{ id: string; name: string }[]> {
    return this.db.query<{ id: string; name: string }>(
      'SELECT id, name FROM mcp_servers WHERE credential_id = $1 AND ($2::uuid IS NULL OR id <> $2::uuid) ORDER BY name',
      { bind: [id, exceptServerId], type: QueryTypes.SELECT, transaction },
    );
  }

  uses(id: string): Promise<CredentialUse[]> {
    return this.db.query<CredentialUse>(
      `SELECT s.id AS mcp_server_id, s.name AS server_name, m.id AS mount_id, m.agent_id FROM mcp_servers s
       LEFT JOIN agent_mcp_mounts m ON m.mcp_server_id = s.id WHERE s.credential_id = $1 ORDER BY s.name, m.created_at`,
      { bind: [id], type: QueryTypes.SELECT },
    );
  }
}
