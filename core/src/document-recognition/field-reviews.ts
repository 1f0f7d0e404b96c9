import { isDeepStrictEqual } from 'node:util';
import { ValidationError } from '@agent-host/sdk';
import type { FieldRow, RecognitionRunRow, ReviewStatus, RevisionRow } from './run-store.js';

/** A review change (PATCH body): any of a corrected value, a review status and a note; who made it is a display snapshot. */
export interface ReviewChange {
  value?: unknown;
  review_status?: ReviewStatus;
  reviewer_note?: string | null;
  reviewer_identity?: Record<string, string> | null;
}

/** The field's state after a change, and which parts changed; undefined when the change changes nothing (no revision). */
export interface ReviewedState {
  value: unknown;
  review_status: ReviewStatus;
  reviewer_note: string | null;
  changed: string[];
}

const refuse = (field: string, msg: string) => new ValidationError([{ loc: ['body', field], msg, type: 'value_error' }]);

/**
 * Applies a review change to a field's current state. A new value without a status marks the field `corrected`
 * (or `accepted` when it is the extracted value again); `corrected` needs a value other than the extracted one and
 * `accepted` the extracted one (422 otherwise). Undefined when nothing would change.
 */
export function applyReview(field: FieldRow, change: ReviewChange): ReviewedState | undefined {
  const valueGiven = Object.prototype.hasOwnProperty.call(change, 'value');
  if (!valueGiven && change.review_status === undefined && change.reviewer_note === undefined)
    throw refuse('value', 'send a value, a review_status or a reviewer_note');
  const value = valueGiven ? (change.value ?? null) : field.current_value;
  const asExtracted = isDeepStrictEqual(value, field.extracted_value);
  const review_status = change.review_status ?? (valueGiven ? (asExtracted ? 'accepted' : 'corrected') : field.current_review_status);
  if (review_status === 'corrected' && asExtracted) throw refuse('review_status', '"corrected" needs a value other than the extracted one');
  if (review_status === 'accepted' && !asExtracted) throw refuse('review_status', '"accepted" keeps the extracted value; a different value is "corrected"');
  const reviewer_note = change.reviewer_note === undefined ? field.current_reviewer_note : change.reviewer_note;
  const changed = [
    ...(isDeepStrictEqual(value, field.current_value) ? [] : ['value']),
    ...(review_status === field.current_review_status ? [] : ['review_status']),
    ...(reviewer_note === field.current_reviewer_note ? [] : ['reviewer_note']),
  ];
  return changed.length ? { value, review_status, reviewer_note, changed } : undefined;
}

/** A `field_reviews[]` item: the field, its current review, and of the ledger only its counters (spec 2.9). */
export function presentFieldReview(field: FieldRow) {
  return {
    field_id: field.field_id,
    label: field.label,
    extracted_value: field.extracted_value,
    confidence: field.confidence,
    page_number: field.page_number,
    current_value: field.current_value,
    review_status: field.current_review_status,
    reviewer_note: field.current_reviewer_note,
    revision_count: field.revision_count,
    is_changed_from_extracted: !isDeepStrictEqual(field.current_value, field.extracted_value),
    last_revised_at: field.last_revised_at?.toISOString() ?? null,
    last_revised_by: field.last_revised_by,
  };
}

export function presentRevision(revision: RevisionRow) {
  return {
    revision_id: revision.id,
    revision_number: revision.revision_number,
    value: revision.value,
    review_status: revision.review_status,
    reviewer_note: revision.reviewer_note,
    previous_value: revision.previous_value,
    previous_review_status: revision.previous_review_status,
    previous_reviewer_note: revision.previous_reviewer_note,
    changed: revision.changed,
    reviewer_identity: revision.reviewer_identity,
    created_at: revision.created_at.toISOString(),
  };
}

/**
 * A field's timeline (spec 2.9): the baseline the run extracted, the current state, and every revision in order.
 * `history_status` is `unrecorded` for runs made before the ledger: changes made then were never recorded, so
 * the revisions (if any) start later than the baseline.
 */
export function presentTimeline(run: RecognitionRunRow, field: FieldRow, revisions: RevisionRow[]) {
  return {
    run_id: run.id,
    field_id: field.field_id,
    label: field.label,
    history_status: run.history_recorded ? 'recorded' : 'unrecorded',
    baseline: {
      value: field.extracted_value,
      confidence: field.confidence,
      page_number: field.page_number,
      extracted_at: run.completed_at?.toISOString() ?? null,
    },
    current_value: field.current_value,
    current_review_status: field.current_review_status,
    current_reviewer_note: field.current_reviewer_note,
    revision_count: field.revision_count,
    revisions: revisions.map(presentRevision),
  };
}
