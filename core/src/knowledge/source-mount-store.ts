import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';

export interface SourceMountRow {
  id: string;
  agent_id: string;
  source_id: string;
  source_name: string;
  source_kind: string;
  created_at: Date;
}

const MOUNT_SELECT = `SELECT m.id, m.agent_id, m.source_id, s.name AS source_name, s.source_kind, m.created_at
  FROM knowledge_mounts m JOIN knowledge_sources s ON s.id = m.source_id`;

/** The SQL of knowledge source mounts: the `knowledge_mounts` table, read with each mount's source. */
export class SourceMountStore extends SqlStore {
  ofAgent(agentId: string): Promise<SourceMountRow[]> {
    return this.db.query<SourceMountRow>(`${MOUNT_SELECT} WHERE m.agent_id = $1 ORDER BY m.created_at, m.id`, { bind: [agentId], type: QueryTypes.SELECT });
  }

  async find(mountId: string): Promise<SourceMountRow | undefined> {
    const [row] = await this.db.query<SourceMountRow>(`${MOUNT_SELECT} WHERE m.id = $1`, { bind: [mountId], type: QueryTypes.SELECT });
    return row;
  }

  /** The agent's mount whose id is `key`, else its mount of the source whose id is `key`. */
  async byMountOrSource(agentId: string, key: string): Promise<SourceMountRow | undefined> {
    const [row] = await this.db.query<SourceMountRow>(
      `${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) AND (m.id = try_uuid($2) OR m.source_id = try_uuid($2)) ORDER BY (m.id = try_uuid($2)) DESC LIMIT 1`,
      { bind: [agentId, key], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** Mounts the source unless it is mounted already; resolves with whether it did. */
  async insert(mount: { id: string; agentId: string; sourceId: string }, createdBy: string | null, transaction: Transaction): Promise<boolean> {
    this.runtimeConfigChanged(transaction);
    const inserted = await this.db.query<{ id: string }>(
      `INSERT INTO knowledge_mounts (id, agent_id, source_id, created_by, created_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (agent_id, source_id) DO NOTHING RETURNING id`,
      { bind: [mount.id, mount.agentId, mount.sourceId, createdBy], type: QueryTypes.SELECT, transaction },
    );
    return inserted.length > 0;
  }

  async delete(mountId: string, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('DELETE FROM knowledge_mounts WHERE id = $1', { bind: [mountId], transaction });
  }
}
