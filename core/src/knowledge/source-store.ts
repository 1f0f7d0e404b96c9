import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';
import { newestFirst } from '../db/keyset-cursor.js';

export interface SourceRow {
  id: string;
  name: string;
  description: string;
  source_kind: 'standard' | 'managed_correction';
  managed_for_agent_id: string | null;
  priority: number;
  chunking_strategy: string;
  chunking_params: Record<string, number>;
  created_at: Date;
  updated_at: Date;
}

/** The columns a write sets. */
export type SourceFields = Pick<SourceRow, 'name' | 'description' | 'priority' | 'chunking_strategy' | 'chunking_params'>;

/** The SQL of knowledge sources: the `knowledge_sources` table, with each source's document count. */
export class SourceStore extends SqlStore {
  page<T>(page: { limit: number; cursor?: string }, present: (row: SourceRow, documentCount: number) => T) {
    return newestFirst<SourceRow & { document_count: string }, T>(
      this.db,
      {
        select: 'r.*, (SELECT count(*) FROM knowledge_documents d WHERE d.source_id = r.id) AS document_count',
        from: 'knowledge_sources',
        where: 'true',
        bind: [],
      },
      page,
      (row) => present(row, Number(row.document_count)),
    );
  }

  async documentCount(sourceId: string): Promise<number> {
    const [row] = await this.db.query<{ count: string }>('SELECT count(*) FROM knowledge_documents WHERE source_id = $1', {
      bind: [sourceId],
      type: QueryTypes.SELECT,
    });
    return Number(row!.count);
  }

  async find(id: string, transaction?: Transaction): Promise<SourceRow | undefined> {
    const [row] = await this.db.query<SourceRow>('SELECT * FROM knowledge_sources WHERE id = try_uuid($1)', {
      bind: [id],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  async insertStandard(id: string, fields: SourceFields, createdBy: string | null, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `INSERT INTO knowledge_sources (id, name, description, source_kind, priority, chunking_strategy, chunking_params, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, 'standard', $4, $5, $6, $7, now(), now())`,
      {
        bind: [id, fields.name, fields.description, fields.priority, fields.chunking_strategy, JSON.stringify(fields.chunking_params), createdBy],
        transaction,
      },
    );
  }

  async update(id: string, fields: SourceFields, transaction: Transaction): Promise<void> {
    this.runtimeConfigChanged(transaction);
    await this.db.query(
      `UPDATE knowledge_sources SET name = $2, description = $3, priority = $4, chunking_strategy = $5, chunking_params = $6, updated_at = now() WHERE id = $1`,
      { bind: [id, fields.name, fields.description, fields.priority, fields.chunking_strategy, JSON.stringify(fields.chunking_params)], transaction },
    );
  }

  /**
   * The agent's managed-correction source, made unless it exists: `created` says which. Two first publishes at once
   * meet on the unique index and both get the same source.
   */
  async ensureManaged(
    agentId: string,
    fields: SourceFields & { source_kind: 'managed_correction' },
    createdBy: string | null,
    transaction: Transaction,
  ): Promise<{ row: SourceRow; created: boolean }> {
    this.runtimeConfigChanged(transaction);
    const [created] = await this.db.query<SourceRow>(
      `INSERT INTO knowledge_sources (id, name, description, source_kind, managed_for_agent_id, priority, chunking_strategy, chunking_params, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())
       ON CONFLICT (managed_for_agent_id) WHERE source_kind = 'managed_correction' DO NOTHING RETURNING *`,
      {
        bind: [
          randomUUID(),
          fields.name,
          fields.description,
          fields.source_kind,
          agentId,
          fields.priority,
          fields.chunking_strategy,
          JSON.stringify(fields.chunking_params),
          createdBy,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (created) return { row: created, created: true };
    const [existing] = await this.db.query<SourceRow>(`SELECT * FROM knowledge_sources WHERE managed_for_agent_id = $1 AND source_kind = $2`, {
      bind: [agentId, fields.source_kind],
      type: QueryTypes.SELECT,
      transaction,
    });
    return { row: existing!, created: false };
  }
}
