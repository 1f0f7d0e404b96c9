import { ConflictError, NotFoundError, ValidationError, type Logger } from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import { z } from 'zod';
import { CorrectionStore, type CorrectableTurnRow, type EndedPublicationRow, type LedgerRow } from './correction-store.js';
import { presentCorrection, presentNoCorrection, type CorrectionRow } from './correction-views.js';
import type { DocumentRepository } from './document-store.js';
import type { KnowledgeDocuments } from './documents.js';
import type { IngestionJobs } from './ingestion-jobs.js';
import type { KnowledgeMounts } from './mounts.js';
import { auditOperation, type Operation } from '../admin/operation.js';
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
  private readonly store: CorrectionStore;

  constructor(
    /** For the audit rows each write commits with. */
    private readonly db: Sequelize,
    private readonly sources: KnowledgeSources,
    private readonly mounts: KnowledgeMounts,
    private readonly documents: KnowledgeDocuments,
    private readonly repository: DocumentRepository,
    private readonly ingestion: IngestionJobs,
    private readonly logger: Logger,
  ) {
    this.store = new CorrectionStore(db);
  }

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
    await this.store.transaction(async (transaction) => {
      const saved = await this.store.saveDraft(
        turn,
        {
          question: input.corrected_question,
          answer: input.corrected_answer,
          manualReplyMessageId: input.manual_reply_message_id,
          note: input.correction_note,
        },
        op.operator.admin_user_id,
        transaction,
      );
      await auditOperation(
        this.db,
        'core.knowledge',
        op,
        {
          action: 'knowledge_correction.update',
          target_type: 'knowledge_correction',
          target_id: saved.id,
          payload: { turn_id: turn.id, revision_number: saved.revision_number },
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
    const source = await this.store.transaction(async (transaction) => {
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
    const locked = await this.store.lock(expected.id, transaction);
    if (!locked || locked.revision_number !== expected.revision_number)
      throw new ConflictError('the correction changed while it was being published; publish again', { code: 'CORRECTION_CONFLICT' });
    refuseRepublish(locked);
    const jobId = await this.ingestion.insert({ sourceId, kind: 'publish_correction', documentIds: [documentId], chunking: null }, op, transaction);
    const sequence = locked.publish_sequence + 1;
    await this.store.insertPublication(locked, { sequence, sourceId, documentId, filename, jobId }, op.operator.admin_user_id, transaction);
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
    return this.store.ledger(sourceId, options, presentPublication);
  }

  /**
   * Settles every publish whose ingestion job has ended, then removes the
   * managed documents nothing serves or waits for (replaced, stale or
   * failed candidates). Idempotent: the ingestion worker calls it after
   * each job and on every supervisor sweep.
   */
  async settle(): Promise<void> {
    const ended = await this.store.endedPublications();
    for (const publication of ended) await this.settleOne(publication);
    await this.removeUnservedDocuments();
  }

  private async settleOne(publication: EndedPublicationRow): Promise<void> {
    await this.store.transaction(async (transaction) => {
      const correction = await this.store.lock(publication.correction_id, transaction);
      const still = await this.store.lockPublishing(publication.id, transaction);
      if (!correction || !still) return;
      const document = publication.document_id ? await this.repository.find(publication.document_id) : undefined;
      let outcome: 'stale' | 'published' | 'failed';
      let error: string | null = null;
      if (publication.sequence < correction.publish_sequence) {
        outcome = 'stale';
      } else if (publication.job_status === 'succeeded' && document?.status === 'indexed') {
        outcome = 'published';
        await this.store.markPublished(correction.id, publication.document_id, publication.revision_number, transaction);
      } else {
        outcome = 'failed';
        error = document?.error_message ?? publication.job_error ?? 'the ingestion job ended without indexing the correction';
        await this.store.markFailed(correction.id, publication.revision_number, error, transaction);
      }
      await this.store.endPublication(publication.id, outcome, error, transaction);
      this.logger.info({ correction_id: correction.id, sequence: publication.sequence, outcome }, 'correction publish settled');
    });
  }

  private async removeUnservedDocuments(): Promise<void> {
    for (const id of await this.store.unservedDocuments(MANAGED_CORRECTION)) {
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
    return this.store.ofTurn(turnId);
  }

  /** The turn, which must have an AI answer and an agent (the correction source is the agent's). */
  private async requireTurn(sessionId: string, turnId: string): Promise<CorrectableTurnRow> {
    const turn = await this.store.turn(sessionId, turnId);
    if (!turn) throw new NotFoundError(`turn ${turnId} not found in session ${sessionId}`, { code: 'TURN_NOT_FOUND' });
    if (turn.reply_text === null) throw new ConflictError(`turn ${turnId} has no AI answer to correct`, { code: 'TURN_NOT_CORRECTABLE' });
    if (!turn.agent_id || !turn.agent_name)
      throw new ConflictError(`turn ${turnId} was not answered by an agent; corrections are kept per agent`, { code: 'TURN_NOT_CORRECTABLE' });
    return turn;
  }

  /** `manual_reply_message_id` names a human reply (role `agent`) already sent in this session. */
  private async requireManualReply(sessionId: string, messageId: string): Promise<void> {
    if ((await this.store.messageRole(sessionId, messageId)) !== 'agent') {
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
