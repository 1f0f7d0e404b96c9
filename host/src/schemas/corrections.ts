import { z } from 'zod';
import { timestamp } from '../validation.js';

/** Corrections as responses show them (spec 2.3); core/src/knowledge/correction-views.ts presents them. */

const correctionStatus = z.enum(['draft', 'publishing', 'published', 'failed']);

/** The fields a turn's correction summary always shows. */
const visible = {
  status: correctionStatus,
  revision_number: z.number().int(),
  manual_reply_message_id: z.string().uuid().nullable(),
  published_at: timestamp.nullable(),
  updated_at: timestamp.nullable(),
};

/** What a correction reports about its publication: only to holders of knowledge.read or knowledge.write. */
const publication = {
  source_id: z.string().uuid().nullable(),
  source_name: z.string().nullable(),
  document_id: z.string().uuid().nullable(),
  ingestion_job_id: z.string().uuid().nullable(),
  ingestion_job_status: z.string().nullable(),
  ingestion_job_message: z.string().nullable(),
  last_error_message: z.string().nullable(),
};

/** A turn's correction summary; the publication fields only for holders of knowledge.read or knowledge.write. */
export const correctionSummary = z.object({ ...visible, ...z.object(publication).partial().shape }).meta({ id: 'CorrectionSummary' });

/** The whole correction draft; `status` is `none` before the first save, when the edited fields are null. */
export const correction = z
  .object({
    correction_id: z.string().uuid().nullable(),
    turn_id: z.string().uuid(),
    session_id: z.string(),
    agent_id: z.string().uuid().nullable(),
    ...visible,
    status: z.enum(['none', ...correctionStatus.options]),
    published_revision_number: z.number().int().nullable(),
    original_user_message: z.string().nullable(),
    original_ai_answer: z.string().nullable(),
    corrected_question: z.string().nullable(),
    corrected_answer: z.string().nullable(),
    correction_note: z.string().nullable(),
    ...publication,
    created_at: timestamp.nullable(),
  })
  .meta({ id: 'Correction' });

/** One publish of a correction, in the ledger of its managed_correction source. */
export const correctionPublication = z
  .object({
    publication_id: z.string().uuid(),
    correction_id: z.string().uuid(),
    turn_id: z.string().uuid(),
    session_id: z.string(),
    agent_id: z.string().uuid(),
    source_id: z.string().uuid(),
    sequence: z.number().int(),
    revision_number: z.number().int(),
    status: z.string().describe('`publishing`, `published`, `failed` or `superseded`'),
    corrected_question: z.string(),
    corrected_answer: z.string(),
    document_id: z.string().uuid().nullable(),
    document_filename: z.string(),
    ingestion_job_id: z.string().uuid().nullable(),
    ingestion_job_status: z.string().nullable(),
    error_message: z.string().nullable(),
    published_by: z.string().uuid().nullable(),
    created_at: timestamp,
    completed_at: timestamp.nullable(),
  })
  .meta({ id: 'CorrectionPublication' });
