/** `draft` (saved, not published at this revision), `publishing`, `published`, or `failed` (its publish did not index). */
export type CorrectionStatus = 'draft' | 'publishing' | 'published' | 'failed';

/** A correction row with the source name and the status of its latest publish's ingestion job. */
export interface CorrectionRow {
  id: string;
  turn_id: string;
  session_id: string;
  agent_id: string;
  status: CorrectionStatus;
  revision_number: number;
  manual_reply_message_id: string | null;
  original_user_message: string;
  original_ai_answer: string;
  corrected_question: string;
  corrected_answer: string;
  correction_note: string | null;
  source_id: string | null;
  source_name: string | null;
  document_id: string | null;
  published_revision_number: number | null;
  publish_sequence: number;
  ingestion_job_id: string | null;
  ingestion_job_status: string | null;
  ingestion_job_error: string | null;
  last_error_message: string | null;
  published_at: Date | string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

/** The columns of {@link CorrectionRow}, from `knowledge_corrections c`. */
export const CORRECTION_COLUMNS = `c.*, s.name AS source_name, j.status AS ingestion_job_status, j.error_message AS ingestion_job_error`;
/** The joins {@link CORRECTION_COLUMNS} need. */
export const CORRECTION_JOINS = `LEFT JOIN knowledge_sources s ON s.id = c.source_id LEFT JOIN ingestion_jobs j ON j.id = c.ingestion_job_id`;

/**
 * The correction of turn `t`, as one JSON value (null when there is none),
 * for the turn timeline; read it with {@link presentCorrectionSummary}.
 */
export const TURN_CORRECTION_JSON = `(SELECT row_to_json(x) FROM (SELECT ${CORRECTION_COLUMNS} FROM knowledge_corrections c ${CORRECTION_JOINS} WHERE c.turn_id = t.id) x) AS correction`;

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** What a correction reports about its publication: the source, the document retrieval serves, the latest job. */
function publication(row: CorrectionRow) {
  return {
    source_id: row.source_id,
    source_name: row.source_name,
    document_id: row.document_id,
    ingestion_job_id: row.ingestion_job_id,
    ingestion_job_status: row.ingestion_job_status,
    ingestion_job_message: row.ingestion_job_error,
    last_error_message: row.last_error_message,
  };
}

/** The fields of spec 2.3 that turn summaries always show. */
function alwaysVisible(row: CorrectionRow) {
  return {
    status: row.status,
    revision_number: row.revision_number,
    manual_reply_message_id: row.manual_reply_message_id,
    published_at: iso(row.published_at),
    updated_at: iso(row.updated_at),
  };
}

/** The whole correction draft (spec 2.3). */
export function presentCorrection(row: CorrectionRow) {
  return {
    correction_id: row.id,
    turn_id: row.turn_id,
    session_id: row.session_id,
    agent_id: row.agent_id,
    ...alwaysVisible(row),
    published_revision_number: row.published_revision_number,
    original_user_message: row.original_user_message,
    original_ai_answer: row.original_ai_answer,
    corrected_question: row.corrected_question,
    corrected_answer: row.corrected_answer,
    correction_note: row.correction_note,
    ...publication(row),
    created_at: iso(row.created_at),
  };
}

/** Nullable fields of the correction shape, so the empty draft below keeps exactly its keys. */
type CorrectionShape = { [K in keyof ReturnType<typeof presentCorrection>]: ReturnType<typeof presentCorrection>[K] | null };

/** A turn before its first save: `status: "none"`, revision 0 and the original texts; nothing else yet. */
export function presentNoCorrection(turn: { id: string; session_id: string; agent_id: string | null; user_text: string; reply_text: string | null }): Omit<
  CorrectionShape,
  'status' | 'revision_number' | 'turn_id' | 'session_id'
> & {
  status: 'none';
  revision_number: 0;
  turn_id: string;
  session_id: string;
} {
  return {
    correction_id: null,
    turn_id: turn.id,
    session_id: turn.session_id,
    agent_id: turn.agent_id,
    status: 'none',
    revision_number: 0,
    manual_reply_message_id: null,
    published_at: null,
    updated_at: null,
    published_revision_number: null,
    original_user_message: turn.user_text,
    original_ai_answer: turn.reply_text,
    corrected_question: null,
    corrected_answer: null,
    correction_note: null,
    source_id: null,
    source_name: null,
    document_id: null,
    ingestion_job_id: null,
    ingestion_job_status: null,
    ingestion_job_message: null,
    last_error_message: null,
    created_at: null,
  };
}

/**
 * A turn's correction summary: the publication fields only for callers who
 * hold `knowledge.read` or `knowledge.write` (spec 2.3).
 */
export function presentCorrectionSummary(row: CorrectionRow | null, revealPublication: boolean) {
  if (!row) return null;
  return revealPublication ? { ...alwaysVisible(row), ...publication(row) } : alwaysVisible(row);
}

/** Whether a caller may see the publication fields of correction summaries. */
export const revealsCorrectionPublication = (permissions: readonly string[]) =>
  permissions.includes('knowledge.read') || permissions.includes('knowledge.write');
