import { randomUUID } from 'node:crypto';
import { QueryTypes, type Transaction } from 'sequelize';
import { SqlStore } from '../db/sql-store.js';
import { newestFirst } from '../db/keyset-cursor.js';
import { CORRECTION_COLUMNS, CORRECTION_JOINS, type CorrectionRow } from './correction-views.js';

/** A turn as a correction sees it: its agent and its texts. */
export interface CorrectableTurnRow {
  id: string;
  session_id: string;
  agent_id: string | null;
  agent_name: string | null;
  user_text: string;
  reply_text: string | null;
}

/** A publication whose ingestion job ended, with the job's outcome. */
export interface EndedPublicationRow {
  id: string;
  correction_id: string;
  sequence: number;
  revision_number: number;
  document_id: string | null;
  job_status: string | null;
  job_error: string | null;
}

export interface LedgerRow {
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

/** The SQL of managed corrections: `knowledge_corrections`, their publications, and the turns and documents they concern. */
export class CorrectionStore extends SqlStore {
  async turn(sessionId: string, turnId: string): Promise<CorrectableTurnRow | undefined> {
    const [row] = await this.db.query<CorrectableTurnRow>(
      `SELECT t.id, t.session_id, t.agent_id, a.name AS agent_name, um.content AS user_text, am.content AS reply_text
       FROM conversation_turns t JOIN chat_messages um ON um.id = t.user_message_id LEFT JOIN chat_messages am ON am.id = t.assistant_message_id
       LEFT JOIN agents a ON a.id = t.agent_id
       WHERE t.session_id = $1 AND t.id = try_uuid($2)`,
      { bind: [sessionId, turnId], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** The role of a message of the session, or `undefined`. */
  async messageRole(sessionId: string, messageId: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ role: string }>('SELECT role FROM chat_messages WHERE id = $1 AND session_id = $2', {
      bind: [messageId, sessionId],
      type: QueryTypes.SELECT,
    });
    return row?.role;
  }

  async ofTurn(turnId: string): Promise<CorrectionRow | undefined> {
    const [row] = await this.db.query<CorrectionRow>(`SELECT ${CORRECTION_COLUMNS} FROM knowledge_corrections c ${CORRECTION_JOINS} WHERE c.turn_id = $1`, {
      bind: [turnId],
      type: QueryTypes.SELECT,
    });
    return row;
  }

  /** The correction, locked for the transaction. */
  async lock(id: string, transaction: Transaction): Promise<CorrectionRow | undefined> {
    const [row] = await this.db.query<CorrectionRow>('SELECT * FROM knowledge_corrections WHERE id = $1 FOR UPDATE', {
      bind: [id],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row;
  }

  /**
   * Saves the turn's draft as a new revision (the first makes the correction): the corrected pair always, the reply
   * and note only when given (`null` clears them).
   */
  async saveDraft(
    turn: CorrectableTurnRow,
    draft: { question: string; answer: string; manualReplyMessageId?: string | null; note?: string | null },
    updatedBy: string | null,
    transaction: Transaction,
  ): Promise<{ id: string; revision_number: number }> {
    const [row] = await this.db.query<{ id: string; revision_number: number }>(
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
          draft.manualReplyMessageId ?? null,
          turn.user_text,
          turn.reply_text,
          draft.question,
          draft.answer,
          draft.note ?? null,
          updatedBy,
          draft.manualReplyMessageId !== undefined,
          draft.note !== undefined,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return row!;
  }

  /** Records a publication of the locked correction's revision and marks the correction `publishing`. */
  async insertPublication(
    correction: CorrectionRow,
    publication: { sequence: number; sourceId: string; documentId: string; filename: string; jobId: string },
    createdBy: string | null,
    transaction: Transaction,
  ): Promise<void> {
    await this.db.query(
      `INSERT INTO knowledge_correction_publications (id, correction_id, source_id, sequence, revision_number, status, corrected_question, corrected_answer, document_id, document_filename, ingestion_job_id, created_by, created_at)
       VALUES ($1, $2, $3, $4, $5, 'publishing', $6, $7, $8, $9, $10, $11, now())`,
      {
        bind: [
          randomUUID(),
          correction.id,
          publication.sourceId,
          publication.sequence,
          correction.revision_number,
          correction.corrected_question,
          correction.corrected_answer,
          publication.documentId,
          publication.filename,
          publication.jobId,
          createdBy,
        ],
        transaction,
      },
    );
    await this.db.query(
      `UPDATE knowledge_corrections SET status = 'publishing', publish_sequence = $2, source_id = $3, ingestion_job_id = $4, last_error_message = NULL, updated_by = $5, updated_at = now() WHERE id = $1`,
      { bind: [correction.id, publication.sequence, publication.sourceId, publication.jobId, createdBy], transaction },
    );
  }

  ledger<T>(sourceId: string, page: { limit: number; cursor?: string }, present: (row: LedgerRow) => T) {
    return newestFirst(
      this.db,
      {
        from: `(SELECT p.*, c.turn_id, c.session_id, c.agent_id, j.status AS ingestion_job_status FROM knowledge_correction_publications p
                JOIN knowledge_corrections c ON c.id = p.correction_id LEFT JOIN ingestion_jobs j ON j.id = p.ingestion_job_id)`,
        where: 'r.source_id = $1',
        bind: [sourceId],
      },
      page,
      present,
    );
  }

  /** Publications still `publishing` whose ingestion job has ended (or is gone), oldest first. */
  endedPublications(): Promise<EndedPublicationRow[]> {
    return this.db.query<EndedPublicationRow>(
      `SELECT p.id, p.correction_id, p.sequence, p.revision_number, p.document_id, j.status AS job_status, j.error_message AS job_error
       FROM knowledge_correction_publications p LEFT JOIN ingestion_jobs j ON j.id = p.ingestion_job_id
       WHERE p.status = 'publishing' AND (j.id IS NULL OR j.status IN ('succeeded', 'partially_failed', 'failed'))
       ORDER BY p.created_at`,
      { type: QueryTypes.SELECT },
    );
  }

  /** Locks the publication for the transaction if it is still `publishing`; resolves with whether it is. */
  async lockPublishing(publicationId: string, transaction: Transaction): Promise<boolean> {
    const [row] = await this.db.query('SELECT 1 FROM knowledge_correction_publications WHERE id = $1 AND status = $2 FOR UPDATE', {
      bind: [publicationId, 'publishing'],
      type: QueryTypes.SELECT,
      transaction,
    });
    return row !== undefined;
  }

  /** The publication's document serves the correction now; the correction is `published` if it still is at that revision. */
  async markPublished(correctionId: string, documentId: string | null, revision: number, transaction: Transaction): Promise<void> {
    await this.db.query(
      `UPDATE knowledge_corrections SET document_id = $2, published_revision_number = $3, published_at = now(), last_error_message = NULL,
         status = CASE WHEN revision_number = $3 THEN 'published' ELSE status END, updated_at = now() WHERE id = $1`,
      { bind: [correctionId, documentId, revision], transaction },
    );
  }

  /** The publish failed; the correction is `failed` if it still is at that revision. */
  async markFailed(correctionId: string, revision: number, error: string, transaction: Transaction): Promise<void> {
    await this.db.query(
      `UPDATE knowledge_corrections SET last_error_message = $3, status = CASE WHEN revision_number = $2 THEN 'failed' ELSE status END, updated_at = now() WHERE id = $1`,
      { bind: [correctionId, revision, error], transaction },
    );
  }

  async endPublication(publicationId: string, outcome: string, error: string | null, transaction: Transaction): Promise<void> {
    await this.db.query('UPDATE knowledge_correction_publications SET status = $2, error_message = $3, completed_at = now() WHERE id = $1', {
      bind: [publicationId, outcome, error],
      transaction,
    });
  }

  /** Documents of managed-correction sources that no correction serves and no publish waits for. */
  async unservedDocuments(managedKind: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT d.id FROM knowledge_documents d JOIN knowledge_sources s ON s.id = d.source_id
       WHERE s.source_kind = $1
         AND NOT EXISTS (SELECT 1 FROM knowledge_corrections c WHERE c.document_id = d.id)
         AND NOT EXISTS (SELECT 1 FROM knowledge_correction_publications p WHERE p.document_id = d.id AND p.status = 'publishing')`,
      { bind: [managedKind], type: QueryTypes.SELECT },
    );
    return rows.map((r) => r.id);
  }
}
