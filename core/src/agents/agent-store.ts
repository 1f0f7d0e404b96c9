import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';
import type { AgentUpdateInput } from './agent-schema.js';

/** Every stored agent field, as validated input defines it. */
export type AgentFields = { [K in keyof AgentUpdateInput]-?: Exclude<AgentUpdateInput[K], undefined> };

export interface AgentRow extends AgentFields {
  id: string;
  published_agent_version_id: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface AgentVersionRow {
  id: string;
  version_number: number;
  reason: string;
  note: string | null;
  snapshot: Record<string, unknown>;
  created_by: string | null;
  created_at: Date;
}

const JSON_FIELDS = new Set([
  'model_routing_config',
  'message_type_response_config',
  'mcp_response_config',
  'mcp_runtime_config',
  'response_grounding_config',
  'retrieval_config',
  'fusion_definition',
]);

function toColumn(column: string, value: unknown): unknown {
  if (value === undefined) return null;
  return JSON_FIELDS.has(column) && value !== null ? JSON.stringify(value) : value;
}

/** The SQL of the agents domain: the `agents` and `agent_versions` tables. Writes take the caller's transaction. */
export class AgentStore extends SqlStore {
  /** One page in id order after `cursor`, with one row more than `limit` when another page follows. */
  page(cursor: string | null, limit: number): Promise<AgentRow[]> {
    return this.db.query<AgentRow>('SELECT * FROM agents WHERE ($1::text IS NULL OR id::text > $1) ORDER BY id LIMIT $2', {
      bind: [cursor, limit + 1],
      type: QueryTypes.SELECT,
    });
  }

  publicAgents(): Promise<AgentRow[]> {
    return this.db.query<AgentRow>("SELECT * FROM agents WHERE status = 'active' AND public_access_mode = 'public_anonymous' ORDER BY name, id", {
      type: QueryTypes.SELECT,
    });
  }

  /** The agent, locked for the transaction when one is given; `undefined` for an unknown or malformed id. */
  async find(id: string, transaction?: Transaction): Promise<AgentRow | undefined> {
    const [row] = await this.db.query<AgentRow>(`SELECT * FROM agents WHERE id = try_uuid($1)${transaction ? ' FOR UPDATE' : ''}`, {
      bind: [id],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  async exists(id: string): Promise<boolean> {
    const [row] = await this.db.query('SELECT 1 FROM agents WHERE id = try_uuid($1)', { bind: [id], type: QueryTypes.SELECT });
    return row !== undefined;
  }

  /** The agent's `public_access_mode`, read in the caller's transaction; `undefined` for an unknown agent. */
  async publicAccessMode(id: string, transaction?: Transaction): Promise<string | undefined> {
    const [row] = await this.db.query<{ public_access_mode: string }>('SELECT public_access_mode FROM agents WHERE id = try_uuid($1)', {
      bind: [id],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row?.public_access_mode;
  }

  async insert(id: string, fields: Partial<AgentFields>, createdBy: string | null, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    const columns = Object.keys(fields);
    await this.db.query(
      `INSERT INTO agents (id, ${columns.join(', ')}, created_by, created_at, updated_at)
       VALUES ($1, ${columns.map((_, i) => `$${i + 2}`).join(', ')}, $${columns.length + 2}, now(), now())`,
      { bind: [id, ...columns.map((c) => toColumn(c, fields[c as keyof AgentFields])), createdBy], transaction },
    );
  }

  /** Writes the given columns (only those a snapshot holds: `columns`). */
  async update(id: string, fields: Partial<AgentFields>, columns: readonly string[], transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    const written = Object.keys(fields).filter((c) => columns.includes(c));
    await this.db.query(`UPDATE agents SET ${written.map((c, i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now() WHERE id = $1`, {
      bind: [id, ...written.map((c) => toColumn(c, fields[c as keyof AgentFields]))],
      transaction,
    });
  }

  async delete(id: string, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('DELETE FROM agents WHERE id = $1', { bind: [id], transaction });
  }

  async setPublished(id: string, versionId: string, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query('UPDATE agents SET published_agent_version_id = $2, updated_at = now() WHERE id = $1', { bind: [id, versionId], transaction });
  }

  versions(agentId: string): Promise<AgentVersionRow[]> {
    return this.db.query<AgentVersionRow>('SELECT * FROM agent_versions WHERE agent_id = $1 ORDER BY version_number DESC', {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
  }

  async versionSnapshot(agentId: string, versionId: string): Promise<AgentFields | undefined> {
    const [row] = await this.db.query<{ snapshot: AgentFields }>('SELECT snapshot FROM agent_versions WHERE id = try_uuid($1) AND agent_id = $2', {
      bind: [versionId, agentId],
      type: QueryTypes.SELECT,
    });
    return row?.snapshot;
  }

  /** Appends a version numbered after the agent's last one. */
  async insertVersion(
    agentId: string,
    version: { reason: string; note: string | null; snapshot: Record<string, unknown>; createdBy: string | null },
    transaction: Transaction,
  ): Promise<AgentVersionRow> {
    const [row] = await this.db.query<AgentVersionRow>(
      `INSERT INTO agent_versions (id, agent_id, version_number, reason, note, snapshot, created_by, created_at)
       SELECT $1, $2, COALESCE(MAX(version_number), 0) + 1, $3, $4, $5, $6, now() FROM agent_versions WHERE agent_id = $2
       RETURNING *`,
      {
        bind: [randomUUID(), agentId, version.reason, version.note, JSON.stringify(version.snapshot), version.createdBy],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return row!;
  }
}
