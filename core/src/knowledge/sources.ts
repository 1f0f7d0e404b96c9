import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import { z } from 'zod';
import { DEFAULT_CHUNKING, parseChunking } from './chunking.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { SourceStore, type SourceRow } from './source-store.js';

export const MANAGED_CORRECTION = 'managed_correction' as const;
/** Managed-correction sources rank first among equally close chunks: a correction is an operator's verified answer. */
const MANAGED_CORRECTION_PRIORITY = 1000;

const sourceFields = {
  name: z.string().trim().min(1).max(200),
  description: z.string().max(5000),
  priority: z.number().int().min(-1000).max(1000),
  chunking_strategy: z.string().min(1).max(64),
  chunking_params: z.record(z.string(), z.unknown()),
};

/** `POST /knowledge-sources`; `managed_correction` sources come only from the correction publish flow (spec 4.8 rule 1). */
export const sourceCreateSchema = z
  .object({
    ...sourceFields,
    source_kind: z.literal('standard', { message: 'only standard sources can be created; managed_correction sources are created by publishing a correction' }),
  })
  .partial()
  .required({ name: true })
  .strict();
export const sourceUpdateSchema = z.object(sourceFields).partial().strict();
export type SourceCreateInput = z.output<typeof sourceCreateSchema>;
export type SourceUpdateInput = z.output<typeof sourceUpdateSchema>;

/** A knowledge source as the API shows it (`presentSource`). */
export const sourceViewSchema = z
  .object({
    source_id: z.string().uuid(),
    name: z.string(),
    description: z.string(),
    source_kind: z.enum(['standard', 'managed_correction']),
    managed_for_agent_id: z.string().uuid().nullable(),
    priority: z.number().int(),
    chunking_strategy: z.string(),
    chunking_params: z.record(z.string(), z.number()),
    document_count: z.number().int().min(0),
    created_at: z.string().datetime(),
    updated_at: z.string().datetime(),
  })
  .meta({ id: 'KnowledgeSource' });
export type SourceView = z.output<typeof sourceViewSchema>;

/** Knowledge sources (spec 2.6, 4.8). Every write commits with its audit record. */
export class KnowledgeSources {
  private readonly store: SourceStore;

  constructor(
    /** For the audit rows each write commits with. */
    private readonly db: Sequelize,
  ) {
    this.store = new SourceStore(db);
  }

  list(options: { limit: number; cursor?: string }) {
    return this.store.page(options, presentSource);
  }

  async get(id: string) {
    const row = await this.find(id);
    return presentSource(row, await this.store.documentCount(id));
  }

  async create(input: SourceCreateInput, op: Operation) {
    const chunking = parseChunking(input.chunking_strategy ?? DEFAULT_CHUNKING.strategy, input.chunking_params, {
      strategy: ['body', 'chunking_strategy'],
      params: ['body', 'chunking_params'],
    });
    const id = randomUUID();
    await this.store.transaction(async (transaction) => {
      await this.store.insertStandard(
        id,
        {
          name: input.name,
          description: input.description ?? '',
          priority: input.priority ?? 0,
          chunking_strategy: chunking.strategy,
          chunking_params: chunking.params,
        },
        op.operator.admin_user_id,
        transaction,
      );
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        { action: 'knowledge_source.create', target_type: 'knowledge_source', target_id: id, payload: { name: input.name } },
        transaction,
      );
    });
    return this.get(id);
  }

  async update(id: string, input: SourceUpdateInput, op: Operation) {
    const current = await this.requireStandard(id, 'updated through PATCH');
    const chunking =
      input.chunking_strategy !== undefined || input.chunking_params !== undefined
        ? parseChunking(
            input.chunking_strategy ?? current.chunking_strategy,
            input.chunking_params ?? (input.chunking_strategy ? {} : current.chunking_params),
            {
              strategy: ['body', 'chunking_strategy'],
              params: ['body', 'chunking_params'],
            },
          )
        : { strategy: current.chunking_strategy, params: current.chunking_params };
    await this.store.transaction(async (transaction) => {
      await this.store.update(
        id,
        {
          name: input.name ?? current.name,
          description: input.description ?? current.description,
          priority: input.priority ?? current.priority,
          chunking_strategy: chunking.strategy,
          chunking_params: chunking.params,
        },
        transaction,
      );
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        { action: 'knowledge_source.update', target_type: 'knowledge_source', target_id: id, payload: { changed: Object.keys(input) } },
        transaction,
      );
    });
    return this.get(id);
  }

  /**
   * The agent's one managed-correction source, created on its first
   * publish (spec 3.2) in the caller's transaction. Two first publishes at
   * once meet on the unique index and both get the same source.
   */
  async managedCorrectionSource(agent: { id: string; name: string }, op: Operation, transaction: Transaction): Promise<SourceRow> {
    const { row, created } = await this.store.ensureManaged(
      agent.id,
      {
        name: `Corrections: ${agent.name}`.slice(0, 200),
        description: "Published corrections of this agent's answers; maintained by the correction publish flow.",
        source_kind: MANAGED_CORRECTION,
        priority: MANAGED_CORRECTION_PRIORITY,
        chunking_strategy: DEFAULT_CHUNKING.strategy,
        chunking_params: DEFAULT_CHUNKING.params,
      },
      op.operator.admin_user_id,
      transaction,
    );
    if (created) {
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        {
          action: 'knowledge_source.create',
          target_type: 'knowledge_source',
          target_id: row.id,
          payload: { source_kind: MANAGED_CORRECTION, agent_id: agent.id },
        },
        transaction,
      );
    }
    return row;
  }

  async find(id: string, transaction?: Transaction): Promise<SourceRow> {
    const row = await this.store.find(id, transaction);
    if (!row) throw new NotFoundError(`knowledge source ${id} not found`, { code: 'KNOWLEDGE_SOURCE_NOT_FOUND' });
    return row;
  }

  /** The source, refusing managed-correction sources (spec 4.8 rule 2): `what` completes "... cannot be <what>". */
  async requireStandard(id: string, what: string): Promise<SourceRow> {
    const row = await this.find(id);
    if (row.source_kind === MANAGED_CORRECTION)
      throw new ConflictError(`knowledge source ${id} is a managed_correction source and cannot be ${what}; it is maintained by the correction publish flow`, {
        code: 'MANAGED_SOURCE_READ_ONLY',
      });
    return row;
  }
}

export function presentSource(row: SourceRow, documentCount: number): SourceView {
  return {
    source_id: row.id,
    name: row.name,
    description: row.description,
    source_kind: row.source_kind,
    managed_for_agent_id: row.managed_for_agent_id,
    priority: row.priority,
    chunking_strategy: row.chunking_strategy,
    chunking_params: row.chunking_params,
    document_count: documentCount,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
