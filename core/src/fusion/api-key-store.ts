import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';

export interface KeyRow {
  id: string;
  agent_id: string;
  label: string;
  prefix: string;
  token_hash: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_by: string | null;
  created_at: Date;
}

/** Public API keys of Fusion agents (migration 0030): metadata and the key's SHA-256, never the key. */
export class ApiKeyStore extends SqlStore {
  ofAgent(agentId: string): Promise<KeyRow[]> {
    return this.db.query<KeyRow>('SELECT * FROM agent_public_api_keys WHERE agent_id = $1 ORDER BY created_at DESC, id DESC', {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
  }

  async insert(
    key: { agentId: string; label: string; prefix: string; hash: string; expiresAt: string | null; createdBy: string },
    transaction: Transaction,
  ): Promise<KeyRow> {
    const [row] = await this.db.query<KeyRow>(
      `INSERT INTO agent_public_api_keys (id, agent_id, label, prefix, token_hash, expires_at, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING *`,
      { bind: [randomUUID(), key.agentId, key.label, key.prefix, key.hash, key.expiresAt, key.createdBy], type: QueryTypes.SELECT, transaction },
    );
    return row!;
  }

  /** Marks the key revoked (the first revocation's time and administrator are kept); undefined when the agent has no such key. */
  async revoke(agentId: string, keyId: string, by: string, transaction: Transaction): Promise<KeyRow | undefined> {
    const [row] = await this.db.query<KeyRow>(
      `UPDATE agent_public_api_keys SET revoked_at = COALESCE(revoked_at, now()), revoked_by = COALESCE(revoked_by, $3)
       WHERE id = try_uuid($1) AND agent_id = $2 RETURNING *`,
      { bind: [keyId, agentId, by], type: QueryTypes.SELECT, transaction },
    );
    return row;
  }

  /** The key with this public prefix, and whether its `last_used_at` is more than a minute old. */
  async byPrefix(prefix: string): Promise<(KeyRow & { stale_use: boolean }) | undefined> {
    const [row] = await this.db.query<KeyRow & { stale_use: boolean }>(
      `SELECT *, (last_used_at IS NULL OR last_used_at < now() - interval '1 minute') AS stale_use FROM agent_public_api_keys WHERE prefix = $1`,
      { bind: [prefix], type: QueryTypes.SELECT },
    );
    return row;
  }

  async markUsed(id: string): Promise<void> {
    await this.db.query('UPDATE agent_public_api_keys SET last_used_at = now() WHERE id = $1', { bind: [id] });
  }
}
