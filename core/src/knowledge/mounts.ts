import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import { z } from 'zod';
import { auditOperation, type Operation } from '../admin/operation.js';
import { AgentStore } from '../agents/agent-store.js';
import { mountExposure } from '../agents/mount-exposure.js';
import { SourceMountStore, type SourceMountRow } from './source-mount-store.js';
import { SourceStore } from './source-store.js';
import { MANAGED_CORRECTION } from './sources.js';

export const mountCreateSchema = z.object({ source_id: z.string().uuid() }).strict();
export type MountCreateInput = z.output<typeof mountCreateSchema>;

/**
 * Mounts of knowledge sources on agents (spec 4.8). Managed-correction
 * sources are mounted only by the correction publish flow, to their own
 * agent, and never unmounted here (rule 1).
 */
export class KnowledgeMounts {
  private readonly store: SourceMountStore;
  private readonly sources: SourceStore;
  private readonly agents: AgentStore;

  constructor(
    /** For the audit rows each write commits with, and the agent's mount exposure they record. */
    private readonly db: Sequelize,
  ) {
    this.store = new SourceMountStore(db);
    this.sources = new SourceStore(db);
    this.agents = new AgentStore(db);
  }

  async list(agentId: string) {
    await this.requireAgent(agentId);
    return { items: (await this.store.ofAgent(agentId)).map(presentMount) };
  }

  async create(agentId: string, input: MountCreateInput, op: Operation) {
    await this.requireAgent(agentId);
    const source = await this.sources.find(input.source_id);
    if (!source) throw new NotFoundError(`knowledge source ${input.source_id} not found`, { code: 'KNOWLEDGE_SOURCE_NOT_FOUND' });
    if (source.source_kind === MANAGED_CORRECTION) {
      throw new ConflictError(
        `knowledge source ${source.id} is a managed_correction source: it is mounted automatically to its own agent when a correction is published, never by hand`,
        { code: 'MANAGED_SOURCE_READ_ONLY' },
      );
    }
    const id = randomUUID();
    await this.store.transaction(async (transaction) => {
      const inserted = await this.store.insert({ id, agentId, sourceId: source.id }, op.operator.admin_user_id, transaction);
      if (!inserted) throw new ConflictError(`knowledge source ${source.id} is already mounted on agent ${agentId}`, { code: 'MOUNT_EXISTS' });
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
    return presentMount((await this.store.find(id))!);
  }

  /** Deletes by `mount_id`, or, when no mount of the agent has that id, by the agent and `source_id` (the transition rule of 4.8). */
  async delete(agentId: string, key: string, op: Operation) {
    const mount = await this.store.byMountOrSource(agentId, key);
    if (!mount) throw new NotFoundError(`agent ${agentId} has no mount ${key} (looked up as mount_id, then as source_id)`, { code: 'MOUNT_NOT_FOUND' });
    if (mount.source_kind === MANAGED_CORRECTION)
      throw new ConflictError(`the mount of managed_correction source ${mount.source_id} cannot be removed by hand`, { code: 'MANAGED_SOURCE_READ_ONLY' });
    await this.store.transaction(async (transaction) => {
      await this.store.delete(mount.id, transaction);
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
    if (await this.store.insert({ id, agentId, sourceId }, op.operator.admin_user_id, transaction)) {
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
    if (!(await this.agents.exists(agentId))) throw new NotFoundError(`agent ${agentId} not found`, { code: 'AGENT_NOT_FOUND' });
  }
}

function presentMount(row: SourceMountRow) {
  return {
    mount_id: row.id,
    agent_id: row.agent_id,
    source_id: row.source_id,
    source_name: row.source_name,
    source_kind: row.source_kind,
    created_at: row.created_at.toISOString(),
  };
}
