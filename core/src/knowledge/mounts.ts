import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { auditOperation, type Operation } from '../admin/operation.js';
import { mountExposure } from '../agents/mount-exposure.js';
import { MANAGED_CORRECTION, type SourceRow } from './sources.js';

export const mountCreateSchema = z.object({ source_id: z.string().uuid() }).strict();
export type MountCreateInput = z.output<typeof mountCreateSchema>;

interface MountRow {
  id: string;
  agent_id: string;
  source_id: string;
  source_name: string;
  source_kind: string;
  created_at: Date;
}

const MOUNT_SELECT = `SELECT m.id, m.agent_id, m.source_id, s.name AS source_name, s.source_kind, m.created_at
  FROM knowledge_mounts m JOIN knowledge_sources s ON s.id = m.source_id`;

/**
 * Mounts of knowledge sources on agents (spec 4.8). Managed-correction
 * sources are mounted only by the correction publish flow, to their own
 * agent, and never unmounted here (rule 1).
 */
export class KnowledgeMounts {
  constructor(private readonly db: Sequelize) {}

  async list(agentId: string) {
    await this.requireAgent(agentId);
    const rows = await this.db.query<MountRow>(`${MOUNT_SELECT} WHERE m.agent_id = $1 ORDER BY m.created_at, m.id`, {
      bind: [agentId],
      type: QueryTypes.SELECT,
    });
    return { items: rows.map(presentMount) };
  }

  async create(agentId: string, input: MountCreateInput, op: Operation) {
    await this.requireAgent(agentId);
    const [source] = await this.db.query<SourceRow>('SELECT * FROM knowledge_sources WHERE id = $1', { bind: [input.source_id], type: QueryTypes.SELECT });
    if (!source) throw new NotFoundError(`knowledge source ${input.source_id} not found`, { code: 'KNOWLEDGE_SOURCE_NOT_FOUND' });
    if (source.source_kind === MANAGED_CORRECTION) {
      throw new ConflictError(
        `knowledge source ${source.id} is a managed_correction source: it is mounted automatically to its own agent when a correction is published, never by hand`,
        { code: 'MANAGED_SOURCE_READ_ONLY' },
      );
    }
    const id = randomUUID();
    await this.db.transaction(async (transaction) => {
      const inserted = await this.db.query<{ id: string }>(
        `INSERT INTO knowledge_mounts (id, agent_id, source_id, created_by, created_at) VALUES ($1, $2, $3, $4, now())
         ON CONFLICT (agent_id, source_id) DO NOTHING RETURNING id`,
        { bind: [id, agentId, source.id, op.operator.admin_user_id], type: QueryTypes.SELECT, transaction },
      );
      if (!inserted.length) throw new ConflictError(`knowledge source ${source.id} is already mounted on agent ${agentId}`, { code: 'MOUNT_EXISTS' });
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        {
          action: 'knowledge_mount.create',
          target_type: 'agent',
          target_id: agentId,
          payload: { mount_id: id, source_id: source.id, ...(await mountExposure(this.db, agentId, transaction)) },
        },
        transaction,
      );
    });
    const [row] = await this.db.query<MountRow>(`${MOUNT_SELECT} WHERE m.id = $1`, { bind: [id], type: QueryTypes.SELECT });
    return presentMount(row!);
  }

  /** Deletes by `mount_id`, or, when no mount of the agent has that id, by the agent and `source_id` (the transition rule of 4.8). */
  async delete(agentId: string, key: string, op: Operation) {
    const [mount] = await this.db.query<MountRow>(
      `${MOUNT_SELECT} WHERE m.agent_id = try_uuid($1) AND (m.id = try_uuid($2) OR m.source_id = try_uuid($2)) ORDER BY (m.id = try_uuid($2)) DESC LIMIT 1`,
      {
        bind: [agentId, key],
        type: QueryTypes.SELECT,
      },
    );
    if (!mount) throw new NotFoundError(`agent ${agentId} has no mount ${key} (looked up as mount_id, then as source_id)`, { code: 'MOUNT_NOT_FOUND' });
    if (mount.source_kind === MANAGED_CORRECTION)
      throw new ConflictError(`the mount of managed_correction source ${mount.source_id} cannot be removed by hand`, { code: 'MANAGED_SOURCE_READ_ONLY' });
    await this.db.transaction(async (transaction) => {
      await this.db.query('DELETE FROM knowledge_mounts WHERE id = $1', { bind: [mount.id], transaction });
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        { action: 'knowledge_mount.delete', target_type: 'agent', target_id: agentId, payload: { mount_id: mount.id, source_id: mount.source_id } },
        transaction,
      );
    });
    return { status: 'deleted', mount_id: mount.id, source_id: mount.source_id, matched_by: mount.id === key ? 'mount_id' : 'source_id' };
  }

  /** Mounts an agent's managed-correction source on it, in the publish's transaction (rule 1); mounting twice is a no-op. */
  async mountManaged(agentId: string, sourceId: string, op: Operation, transaction: Transaction): Promise<void> {
    const id = randomUUID();
    const inserted = await this.db.query(
      `INSERT INTO knowledge_mounts (id, agent_id, source_id, created_by, created_at) VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (agent_id, source_id) DO NOTHING RETURNING id`,
      { bind: [id, agentId, sourceId, op.operator.admin_user_id], type: QueryTypes.SELECT, transaction },
    );
    if (inserted.length) {
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        { action: 'knowledge_mount.create', target_type: 'agent', target_id: agentId, payload: { mount_id: id, source_id: sourceId, managed: true } },
        transaction,
      );
    }
  }

  private async requireAgent(agentId: string): Promise<void> {
    const [row] = await this.db.query('SELECT 1 FROM agents WHERE id = try_uuid($1)', { bind: [agentId], type: QueryTypes.SELECT });
    if (!row) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
  }
}

function presentMount(row: MountRow) {
  return {
    mount_id: row.id,
    agent_id: row.agent_id,
    source_id: row.source_id,
    source_name: row.source_name,
    source_kind: row.source_kind,
    created_at: row.created_at.toISOString(),
  };
}
