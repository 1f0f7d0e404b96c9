import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@agent-host/sdk';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { DEFAULT_CHUNKING, parseChunking } from './chunking.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { newestFirst } from '../db/keyset-cursor.js';

export const MANAGED_CORRECTION = 'managed_correction';
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

export interface SourceRow {
  id: string;
  name: string;
  description: string;
  source_kind: SourceView['source_kind'];
  managed_for_agent_id: string | null;
  priority: number;
  chunking_strategy: string;
  chunking_params: Record<string, number>;
  created_at: Date;
  updated_at: Date;
}

/** Knowledge sources (spec 2.6, 4.8). Every write commits with its audit record. */
export class KnowledgeSources {
  constructor(private readonly db: Sequelize) {}

  list(options: { limit: number; cursor?: string }) {
    return newestFirst<SourceRow & { document_count: string }, ReturnType<typeof presentSource>>(
      this.db,
      {
        select: 'r.*, (SELECT count(*) FROM knowledge_documents d WHERE d.source_id = r.id) AS document_count',
        from: 'knowledge_sources',
        where: 'true',
        bind: [],
      },
      options,
      (r) => presentSource(r, Number(r.document_count)),
    );
  }

  async get(id: string) {
    const row = await this.find(id);
    const [{ count }] = (await this.db.query<{ count: string }>('SELECT count(*) FROM knowledge_documents WHERE source_id = $1', {
      bind: [id],
      type: QueryTypes.SELECT,
    })) as [{ count: string }];
    return presentSource(row, Number(count));
  }

  async create(input: SourceCreateInput, op: Operation) {
    const chunking = parseChunking(input.chunking_strategy ?? DEFAULT_CHUNKING.strategy, input.chunking_params, {
      strategy: ['body', 'chunking_strategy'],
      params: ['body', 'chunking_params'],
    });
    const id = randomUUID();
    await this.db.transaction(async (transaction) => {
      await this.db.query(
        `INSERT INTO knowledge_sources (id, name, description, source_kind, priority, chunking_strategy, chunking_params, created_by, created_at, updated_at)
         VALUES ($1, $2, $3, 'standard', $4, $5, $6, $7, now(), now())`,
        {
          bind: [id, input.name, input.description ?? '', input.priority ?? 0, chunking.strategy, JSON.stringify(chunking.params), op.operator.admin_user_id],
          transaction,
        },
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
    await this.db.transaction(async (transaction) => {
      await this.db.query(
        `UPDATE knowledge_sources SET name = $2, description = $3, priority = $4, chunking_strategy = $5, chunking_params = $6, updated_at = now() WHERE id = $1`,
        {
          bind: [
            id,
            input.name ?? current.name,
            input.description ?? current.description,
            input.priority ?? current.priority,
            chunking.strategy,
            JSON.stringify(chunking.params),
          ],
          transaction,
        },
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
    const created = await this.db.query<SourceRow>(
      `INSERT INTO knowledge_sources (id, name, description, source_kind, managed_for_agent_id, priority, chunking_strategy, chunking_params, created_by, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())
       ON CONFLICT (managed_for_agent_id) WHERE source_kind = 'managed_correction' DO NOTHING RETURNING *`,
      {
        bind: [
          randomUUID(),
          `Corrections: ${agent.name}`.slice(0, 200),
          "Published corrections of this agent's answers; maintained by the correction publish flow.",
          MANAGED_CORRECTION,
          agent.id,
          MANAGED_CORRECTION_PRIORITY,
          DEFAULT_CHUNKING.strategy,
          JSON.stringify(DEFAULT_CHUNKING.params),
          op.operator.admin_user_id,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    if (created[0]) {
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        {
          action: 'knowledge_source.create',
          target_type: 'knowledge_source',
          target_id: created[0].id,
          payload: { source_kind: MANAGED_CORRECTION, agent_id: agent.id },
        },
        transaction,
      );
      return created[0];
    }
    const [existing] = await this.db.query<SourceRow>(
      `SELECT * FROM knowledge_sources WHERE managed_for_agent_id = $1 AND source_kind = '${MANAGED_CORRECTION}'`,
      {
        bind: [agent.id],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return existing!;
  }

  async find(id: string, transaction?: Transaction): Promise<SourceRow> {
    const [row] = await this.db.query<SourceRow>('SELECT * FROM knowledge_sources WHERE id = try_uuid($1)', {
      bind: [id],
      type: QueryTypes.SELECT,
      ...(transaction && { transaction }),
    });
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
