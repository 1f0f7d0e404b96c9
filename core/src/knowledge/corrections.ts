import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, ValidationError, type Logger } from '@agent-host/sdk';
import { QueryTypes, type Sequelize, type Transaction } from 'sequelize';
import { z } from 'zod';
import { CORRECTION_COLUMNS, CORRECTION_JOINS, presentCorrection, presentNoCorrection, type CorrectionRow } from './correction-views.js';
import type { DocumentRepository } from './document-store.js';
import type { KnowledgeDocuments } from './documents.js';
import type { IngestionJobs } from './ingestion-jobs.js';
import type { KnowledgeMounts } from './mounts.js';
import { auditOperation, type Operation } from '../admin/operation.js';
import { newestFirst } from '../db/keyset-cursor.js';
import { MANAGED_CORRECTION, type KnowledgeSources } from './sources.js';

/** Longest corrected question or answer, in characters. */
export const CORRECTION_TEXT_MAX = 20_000;

/** `PATCH .../correction`: the corrected pair is required; the other fields keep their value when absent and clear on null. */
export const correctionUpdateSchema = z
  .object({
    corrected_question: z.string().trim().min(1).max(CORRECTION_TEXT_MAX),
    corrected_answer: z.string().trim().min(1).max(CORRECTION_TEXT_MAX),
    manual_reply_message_id: z.string().uuid().nullable().optional(),
    correction_note: z.string().max(5000).nullable().optional(),
  })
  .strict();
export type CorrectionUpdateInput = z.output<typeof correctionUpdateSchema>;

interface TurnRow {
  id: string;
  session_id: string;
  agent_id: string | null;
  agent_name: string | null;
  user_text: string;
  reply_text: string | null;
}

interface PublicationRow {
  id: string;
  correction_id: string;
  sequence: number;
  revision_number: number;
  document_id: string | null;
  job_status: string | null;
  job_error: string | null;
}

/**
 * Managed corrections (spec 2.3, 3.2). An operator corrects an AI turn as a
 * draft; publishing writes the corrected pair as a candidate document of
 * the agent's managed-correction source (created and mounted on first
 * publish) and ingests only that document. When its job ends, the publish
 * settles: the newest publish makes its document the one retrieval serves
 * (`published`) and the document it replaces is removed; a publish older
 * than the newest is discarded as stale; a failed ingestion makes the
 * correction `failed` and leaves the last published document serving.
 */
export class KnowledgeCorrections {
  constructor(
    private readonly db: Sequelize,
    private readonly sources: KnowledgeSources,
    private readonly mounts: KnowledgeMounts,
    private readonly documents: KnowledgeDocuments,
    private readonly repository: DocumentRepository,
    private readonly ingestion: IngestionJobs,
    private readonly logger: Logger,
  ) {}

  /** The turn's correction; before the first save, an empty draft (`status: "none"`) holding the original texts. */
  async get(sessionId: string, turnId: string) {
    const turn = await this.requireTurn(sessionId, turnId);
    const row = await this.find(turn.id);
    return row ? presentCorrection(row) : presentNoCorrection(turn);
  }

  /** Saves the draft: every save is a new revision and makes the correction a `draft` again. */
  async update(sessionId: string, turnId: string, input: CorrectionUpdateInput, op: Operation) {
    const turn = await this.requireTurn(sessionId, turnId);
    if (input.manual_reply_message_id) await this.requireManualReply(turn.session_id, input.manual_reply_message_id);
    await this.db.transaction(async (transaction) => {
      const [saved] = await this.db.query<{ id: string; revision_number: number }>(
        `INSERT INTO knowledge_corrections (id, turn_id, session_id, agent_id, status, revision_number, manual_reply_message_id, original_user_message, original_ai_answer,
           corrected_question, corrected_answer, correction_note, created_by, updated_by, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'draft', 1, $5, $6, $7, $8, $9, $10, $11, $11, now(), now())
         ON CONFLICT (turn_id) DO UPDATE SET status = 'draft', revision_number = knowledge_corrections.revision_number + 1,
           corrected_question = EXCLUDED.corrected_question, corrected_answer = EXCLUDED.corrected_answer,
           manual_reply_message_id = CASE WHEN $12 THEN EXCLUDED.manual_reply_message_id ELSE knowledge_corrections.manual_reply_message_id END,
           correction_note = CASE WHEN $13 THEN EXCLUDED.correction_note ELSE knowledge_corrections.correction_note END,
           updated_by = EXCLUDED.updated_by, updated_at = now()
         RETURNING id, revision_number`,
        {
          bind: [
            randomUUID(),
            turn.id,
            turn.session_id,
            turn.agent_id,
            input.manual_reply_message_id ?? null,
            turn.user_text,
            turn.reply_text,
            input.corrected_question,
            input.corrected_answer,
            input.correction_note ?? null,
            op.operator.admin_user_id,
            input.manual_reply_message_id !== undefined,
            input.correction_note !== undefined,
          ],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        {
          action: 'knowledge_correction.update',
          target_type: 'knowledge_correction',
          target_id: saved!.id,
          payload: { turn_id: turn.id, revision_number: saved!.revision_number },
        },
        transaction,
      );
    });
    return this.get(sessionId, turnId);
  }

  /**
   * Publishes the current revision: `publishing` until its ingestion job
   * settles. A draft or a failed publish may be published; a correction
   * already publishing or published at this revision is a 409.
   */
  async publish(sessionId: string, turnId: string, op: Operation) {
    const turn = await this.requireTurn(sessionId, turnId);
    const current = await this.find(turn.id);
    if (!current)
      throw new ConflictError(`turn ${turn.id} has no correction draft; save one with PATCH .../correction first`, { code: 'TURN_NOT_CORRECTABLE' });
    refuseRepublish(current);
    const source = await this.db.transaction(async (transaction) => {
      const managed = await this.sources.managedCorrectionSource({ id: turn.agent_id!, name: turn.agent_name! }, op, transaction);
      await this.mounts.mountManaged(turn.agent_id!, managed.id, op, transaction);
      return managed;
    });
    const filename = `correction-${turn.id}-r${current.revision_number}.txt`;
    const metadata = {
      knowledge_correction_id: current.id,
      source_turn_id: turn.id,
      source_session_id: turn.session_id,
      document_origin: MANAGED_CORRECTION,
      revision_number: current.revision_number,
    };
    const text = `Question: ${current.corrected_question}\nAnswer: ${current.corrected_answer}\n`;
    let jobId = '';
    await this.documents.store(
      source.id,
      { filename, contentType: 'text/plain; charset=utf-8', data: Buffer.from(text) },
      metadata,
      op,
      async (transaction, documentId) => {
        // Core wrote the text, so it is its own parse snapshot: indexing needs no parser plugin.
        await this.repository.saveSnapshot(
          documentId,
          { text, elements: [{ type: 'NarrativeText', text }], metadata: { parser: MANAGED_CORRECTION } },
          transaction,
        );
        jobId = await this.recordPublish(current, source.id, documentId, filename, op, transaction);
      },
    );
    try {
      await this.ingestion.dispatch(jobId);
    } catch (error) {
      this.logger.error({ err: error, correction_id: current.id }, 'could not queue the correction ingestion job');
      await this.settle();
    }
    return this.get(sessionId, turnId);
  }

  /**
   * Within the candidate document's transaction: checks again, under the
   * correction's row lock, that this revision is still the one to publish,
   * then records the publication, its ingestion job and the new state.
   */
  private async recordPublish(
    expected: CorrectionRow,
    sourceId: string,
    documentId: string,
    filename: string,
    op: Operation,
    transaction: Transaction,
  ): Promise<string> {
    const [locked] = await this.db.query<CorrectionRow>('SELECT * FROM knowledge_corrections WHERE id = $1 FOR UPDATE', {
      bind: [expected.id],
      type: QueryTypes.SELECT,
      transaction,
    });
    if (!locked || locked.revision_number !== expected.revision_number)
      throw new ConflictError('the correction changed while it was being published; publish again', { code: 'CORRECTION_CONFLICT' });
    refuseRepublish(locked);
    const jobId = await this.ingestion.insert({ sourceId, kind: 'publish_correction', documentIds: [documentId], chunking: null }, op, transaction);
    const sequence = locked.publish_sequence + 1;
    await this.db.query(
      `INSERT INTO knowledge_correction_publications (id, correction_id, source_id, sequence, revision_number, status, corrected_question, corrected_answer, document_id, document_filename, ingestion_job_id, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, 'publishing', $6, $7, $8, $9, $10, $11, now())`,
      {
        bind: [
          randomUUID(),
          locked.id,
          sourceId,
          sequence,
          locked.revision_number,
          locked.corrected_question,
          locked.corrected_answer,
          documentId,
          filename,
          jobId,
          op.operator.admin_user_id,
        ],
        transaction,
      },
    );
    await this.db.query(
      `UPDATE knowledge_corrections SET status = 'publishing', publish_sequence = $2, source_id = $3, ingestion_job_id = $4, last_error_message = NULL, updated_by = $5, updated_at = now() WHERE id = $1`,
      { bind: [locked.id, sequence, sourceId, jobId, op.operator.admin_user_id], transaction },
    );
    await auditOperation(
      this.db,
      'core.knowledge',
      op,
      {
        action: 'knowledge_correction.publish',
        target_type: 'knowledge_correction',
        target_id: locked.id,
        payload: { revision_number: locked.revision_number, sequence, document_id: documentId, ingestion_job_id: jobId },
      },
      transaction,
    );
    return jobId;
  }

  /** The publication ledger of a source, newest first. */
  async ledger(sourceId: string, options: { limit: number; cursor?: string }) {
    await this.sources.find(sourceId);
    return newestFirst(
      this.db,
      {
        from: `(SELECT p.*, c.turn_id, c.session_id, c.agent_id, j.status AS ingestion_job_status FROM knowledge_correction_publications p
                JOIN knowledge_corrections c ON c.id = p.correction_id LEFT JOIN ingestion_jobs j ON j.id = p.ingestion_job_id)`,
        where: 'r.source_id = $1',
        bind: [sourceId],
      },
      options,
      presentPublication,
    );
  }

  /**
   * Settles every publish whose ingestion job has ended, then removes the
   * managed documents nothing serves or waits for (replaced, stale or
   * failed candidates). Idempotent: the ingestion worker calls it after
   * each job and on every supervisor sweep.
   */
  async settle(): Promise<void> {
    const ended = await this.db.query<PublicationRow>(
      `SELECT p.id, p.correction_id, p.sequence, p.revision_number, p.document_id, j.status AS job_status, j.error_message AS job_error
       FROM knowledge_correction_publications p LEFT JOIN ingestion_jobs j ON j.id = p.ingestion_job_id
       WHERE p.status = 'publishing' AND (j.id IS NULL OR j.status IN ('succeeded', 'partially_failed', 'failed'))
       ORDER BY p.created_at`,
      { type: QueryTypes.SELECT },
    );
    for (const publication of ended) await this.settleOne(publication);
    await this.removeUnservedDocuments();
  }

  private async settleOne(publication: PublicationRow): Promise<void> {
    await this.db.transaction(async (transaction) => {
      const [correction] = await this.db.query<CorrectionRow>('SELECT * FROM knowledge_corrections WHERE id = $1 FOR UPDATE', {
        bind: [publication.correction_id],
        type: QueryTypes.SELECT,
        transaction,
      });
      const [still] = await this.db.query('SELECT 1 FROM knowledge_correction_publications WHERE id = $1 AND status = $2 FOR UPDATE', {
        bind: [publication.id, 'publishing'],
        type: QueryTypes.SELECT,
        transaction,
      });
      if (!correction || !still) return;
      const document = publication.document_id ? await this.repository.find(publication.document_id) : undefined;
      let outcome: 'stale' | 'published' | 'failed';
      let error: string | null = null;
      if (publication.sequence < correction.publish_sequence) {
        outcome = 'stale';
      } else if (publication.job_status === 'succeeded' && document?.status === 'indexed') {
        outcome = 'published';
        await this.db.query(
          `UPDATE knowledge_corrections SET document_id = $2, published_revision_number = $3, published_at = now(), last_error_message = NULL,
             status = CASE WHEN revision_number = $3 THEN 'published' ELSE status END, updated_at = now() WHERE id = $1`,
          { bind: [correction.id, publication.document_id, publication.revision_number], transaction },
        );
      } else {
        outcome = 'failed';
        error = document?.error_message ?? publication.job_error ?? 'the ingestion job ended without indexing the correction';
        await this.db.query(
          `UPDATE knowledge_corrections SET last_error_message = $3, status = CASE WHEN revision_number = $2 THEN 'failed' ELSE status END, updated_at = now() WHERE id = $1`,
          { bind: [correction.id, publication.revision_number, error], transaction },
        );
      }
      await this.db.query('UPDATE knowledge_correction_publications SET status = $2, error_message = $3, completed_at = now() WHERE id = $1', {
        bind: [publication.id, outcome, error],
        transaction,
      });
      this.logger.info({ correction_id: correction.id, sequence: publication.sequence, outcome }, 'correction publish settled');
    });
  }

  private async removeUnservedDocuments(): Promise<void> {
    const unserved = await this.db.query<{ id: string }>(
      `SELECT d.id FROM knowledge_documents d JOIN knowledge_sources s ON s.id = d.source_id
       WHERE s.source_kind = '${MANAGED_CORRECTION}'
         AND NOT EXISTS (SELECT 1 FROM knowledge_corrections c WHERE c.document_id = d.id)
         AND NOT EXISTS (SELECT 1 FROM knowledge_correction_publications p WHERE p.document_id = d.id AND p.status = 'publishing')`,
      { type: QueryTypes.SELECT },
    );
    for (const { id } of unserved) {
      const row = await this.repository.find(id);
      if (!row) continue;
      await this.documents
        .purge(row)
        .catch((error: unknown) =>
          this.logger.warn({ err: error, document_id: id }, 'could not remove an unserved correction document; the next sweep retries'),
        );
    }
  }

  private async find(turnId: string): Promise<CorrectionRow | undefined> {
    const [row] = await this.db.query<CorrectionRow>(`SELECT ${CORRECTION_COLUMNS} FROM knowledge_corrections c ${CORRECTION_JOINS} WHERE c.turn_id = $1`, {
      bind: [turnId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  /** The turn, which must have an AI answer and an agent (the correction source is the agent's). */
  private async requireTurn(sessionId: string, turnId: string): Promise<TurnRow> {
    const [turn] = await this.db.query<TurnRow>(
      `SELECT t.id, t.session_id, t.agent_id, a.name AS agent_name, um.content AS user_text, am.content AS reply_text
       FROM conversation_turns t JOIN chat_messages um ON um.id = t.user_message_id LEFT JOIN chat_messages am ON am.id = t.assistant_message_id
       LEFT JOIN agents a ON a.id = t.agent_id
       WHERE t.session_id = $1 AND t.id = try_uuid($2)`,
      { bind: [sessionId, turnId], type: QueryTypes.SELECT },
    );
    if (!turn) throw new NotFoundError(`turn ${turnId} not found in session ${sessionId}`, { code: 'TURN_NOT_FOUND' });
    if (turn.reply_text === null) throw new ConflictError(`turn ${turnId} has no AI answer to correct`, { code: 'TURN_NOT_CORRECTABLE' });
    if (!turn.agent_id || !turn.agent_name)
      throw new ConflictError(`turn ${turnId} was not answered by an agent; corrections are kept per agent`, { code: 'TURN_NOT_CORRECTABLE' });
    return turn;
  }

  /** `manual_reply_message_id` names a human reply (role `agent`) already sent in this session. */
  private async requireManualReply(sessionId: string, messageId: string): Promise<void> {
    const [message] = await this.db.query<{ role: string }>('SELECT role FROM chat_messages WHERE id = $1 AND session_id = $2', {
      bind: [messageId, sessionId],
      type: QueryTypes.SELECT,
    });
    if (!message || message.role !== 'agent') {
      throw new ValidationError([
        { loc: ['body', 'manual_reply_message_id'], msg: `must name a human reply (role "agent") sent in session ${sessionId}`, type: 'value_error' },
      ]);
    }
  }
}

function refuseRepublish(row: CorrectionRow): void {
  if (row.status === 'publishing')
    throw new ConflictError(`revision ${row.revision_number} of this correction is already being published`, { code: 'CORRECTION_CONFLICT' });
  if (row.status === 'published')
    throw new ConflictError(`revision ${row.revision_number} of this correction is already published; save a new revision to publish again`, {
      code: 'CORRECTION_CONFLICT',
    });
}

interface LedgerRow {
  id: string;
  correction_id: string;
  turn_id: string;
  session_id: string;
  agent_id: string;
  source_id: string;
  sequence: number;
  revision_number: number;
  status: string;
  corrected_question: string;
  corrected_answer: string;
  document_id: string | null;
  document_filename: string;
  ingestion_job_id: string | null;
  ingestion_job_status: string | null;
  error_message: string | null;
  created_by: string | null;
  created_at: Date;
  completed_at: Date | null;
}

function presentPublication(row: LedgerRow) {
  return {
    publication_id: row.id,
    correction_id: row.correction_id,
    turn_id: row.turn_id,
    session_id: row.session_id,
    agent_id: row.agent_id,
    source_id: row.source_id,
    sequence: row.sequence,
    revision_number: row.revision_number,
    status: row.status,
    corrected_question: row.corrected_question,
    corrected_answer: row.corrected_answer,
    document_id: row.document_id,
    document_filename: row.document_filename,
    ingestion_job_id: row.ingestion_job_id,
    ingestion_job_status: row.ingestion_job_status,
    error_message: row.error_message,
    published_by: row.created_by,
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
  };
}
