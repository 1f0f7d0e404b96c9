import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';

export interface RuntimeAgentRow {
  agent_id: string;
  registered_by: string | null;
  registered_at: Date;
}

/** Fusion agents registered as document-recognition runtime agents (migration 0032). */
export class RuntimeAgentStore extends SqlStore {
  /** Registers the agent (again: the first registration stands); answers the registration. */
  async register(agentId: string, adminId: string, transaction: Transaction): Promise<{ row: RuntimeAgentRow; created: boolean }> {
    const inserted = await this.db.query<RuntimeAgentRow>(
      `INSERT INTO document_recognition_runtime_agents (agent_id, registered_by, registered_at) VALUES ($1, $2, now())
       ON CONFLICT (agent_id) DO NOTHING RETURNING *`,
      { bind: [agentId, adminId], type: QueryTypes.SELECT, transaction },
    );
    if (inserted[0]) return { row: inserted[0], created: true };
    return { row: (await this.find(agentId, transaction))!, created: false };
  }

  async remove(agentId: string, transaction: Transaction): Promise<boolean> {
    const rows = await this.db.query('DELETE FROM document_recognition_runtime_agents WHERE agent_id = try_uuid($1) RETURNING agent_id', {
      bind: [agentId],
      type: QueryTypes.SELECT,
      transaction,
    });
    return rows.length > 0;
  }

  async find(agentId: string, transaction?: Transaction): Promise<RuntimeAgentRow | undefined> {
    const [row] = await this.db.query<RuntimeAgentRow>('SELECT * FROM document_recognition_runtime_agents WHERE agent_id = try_uuid($1)', {
      bind: [agentId],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  list(): Promise<RuntimeAgentRow[]> {
    return this.db.query<RuntimeAgentRow>('SELECT * FROM document_recognition_runtime_agents ORDER BY registered_at', { type: QueryTypes.SELECT });
  }
}
