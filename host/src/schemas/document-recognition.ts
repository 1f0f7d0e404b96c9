import { fusionDefinitionSchema } from '@agent-host/sdk';
import { z } from 'zod';
import { runWait, timestamp } from '../validation.js';
import { estimatedCost, tokenUsageSummary } from './usage.js';

/** Document recognition as responses show it (spec 2.9, 4.10), from core/src/document-recognition. */

const STATUSES = ['queued', 'running', 'recovering', 'succeeded', 'failed'] as const;
const REVIEW_STATES = ['not_started', 'in_progress', 'reviewed'] as const;
const REVIEW_STATUSES = ['unreviewed', 'accepted', 'corrected', 'rejected'] as const;
const downloadMode = z.enum(['presigned_url', 'object_store_proxy']).nullable();
const json = z.unknown().describe('Any JSON value');
const modelBinding = z.object({
  model_name: z.string(),
  model_provider: z.string(),
  model_temperature: z.number(),
  source: z.enum(['agent', 'global_fallback']),
});

export const runFilters = z
  .object({
    status: z.enum(STATUSES).optional(),
    review_state: z.enum(REVIEW_STATES).optional().describe('`reviewed`: succeeded, every field reviewed; `in_progress`: some; `not_started`: none'),
  })
  .strict();

export const adminRunFilters = runFilters.extend({ runtime_agent_id: z.string().uuid().optional() }).strict();

export const recognitionRunWait = runWait('default [document_recognition] wait_seconds');

const fieldSpec = z.object({ field_id: z.string(), label: z.string(), type: z.string().nullable() });

export const runtimeAgent = z
  .object({
    runtime_agent_id: z.string().uuid().describe("The fusion agent's agent_id"),
    agent_id: z.string().uuid(),
    name: z.string().nullable(),
    description: z.string().nullable(),
    available: z.boolean().describe('Whether it takes runs now'),
    unavailable_reason: z.string().nullable(),
    published_agent_version_id: z.string().uuid().nullable(),
    upload_slot: z
      .object({
        slot: z.string().describe('The file input slot the upload fills'),
        accepted_content_types: z.array(z.string()).describe('Types both the slot and the recognizer take'),
        max_size_bytes: z.number().int(),
      })
      .nullable(),
    output_slot: z.object({ slot: z.string(), fields: z.array(fieldSpec) }).nullable(),
    execution_policy: z.object({
      recognizer_key: z.string(),
      runtime_key: z.string().nullable(),
      max_pages: z.number().int(),
      preview_pages: z.number().int(),
      max_attempts: z.number().int(),
      run_lease_seconds: z.number().int(),
      default_wait_seconds: z.number().int(),
      anonymous_runs_per_minute: z.number().int(),
      model_binding: modelBinding.nullable().optional().describe('Administrators only'),
    }),
    registered_at: timestamp,
    registered_by: z.string().uuid().nullable().optional().describe('Administrators only'),
  })
  .meta({ id: 'RuntimeAgent' });

export const registeredRuntimeAgent = runtimeAgent.extend({ created: z.boolean().describe('false: it was registered already') });

const error = z.object({ code: z.string(), message: z.string(), validation_errors: z.array(z.string()).optional() }).nullable();

const listedRunFields = {
  run_id: z.string().uuid(),
  runtime_agent_id: z.string().uuid(),
  runtime_agent_version_id: z.string().uuid(),
  runtime_agent_name: z.string(),
  status: z.enum(STATUSES),
  review_state: z.enum(REVIEW_STATES),
  field_count: z.number().int(),
  reviewed_field_count: z.number().int(),
  source_filename: z.string(),
  source_content_type: z.string(),
  source_size_bytes: z.number().int(),
  page_count: z.number().int().nullable(),
  error,
  created_at: timestamp,
  completed_at: timestamp.nullable(),
};

export const listedRun = z.object(listedRunFields).meta({ id: 'DocumentRecognitionRunListed' });

export const fieldReview = z
  .object({
    field_id: z.string(),
    label: z.string(),
    extracted_value: json,
    confidence: z.number().nullable(),
    page_number: z.number().int().nullable(),
    current_value: json,
    review_status: z.enum(REVIEW_STATUSES),
    reviewer_note: z.string().nullable(),
    revision_count: z.number().int(),
    is_changed_from_extracted: z.boolean(),
    last_revised_at: timestamp.nullable(),
    last_revised_by: z.record(z.string(), z.unknown()).nullable(),
  })
  .meta({ id: 'FieldReview' });

const issue = z.object({
  severity: z.enum(['info', 'warning']),
  kind: z.enum(['document_warning', 'field_missing', 'field_not_located', 'field_low_confidence']),
  message: z.string(),
  field_id: z.string().optional(),
});

export const run = z
  .object({
    ...listedRunFields,
    runtime_agent_type_snapshot: z.string(),
    runtime_binding_snapshot: z
      .object({
        agent_name: z.string(),
        upload_slot: z.string(),
        output_slot: z.string(),
        recognizer_key: z.string(),
        runtime_key: z.string().optional().describe('Public callers'),
        definition: fusionDefinitionSchema.optional().describe('Administrators only: the published definition the run used'),
        model_binding: modelBinding.optional().describe('Administrators only'),
      })
      .describe('What the run was bound to when it was made'),
    source_sha256: z.string(),
    source_document_url: z.string().nullable(),
    source_document_download_mode: downloadMode,
    source_document_download_warning: z.string().nullable(),
    source_pdf_url: z.string().nullable(),
    source_pdf_download_mode: downloadMode,
    source_pdf_download_warning: z.string().nullable(),
    pdf_rendition: z.enum(['original', 'image', 'text_layout']).nullable(),
    preview_pages: z.array(
      z.object({
        page_number: z.number().int(),
        width: z.number().int(),
        height: z.number().int(),
        url: z.string().nullable(),
        download_mode: downloadMode,
        download_warning: z.string().nullable(),
      }),
    ),
    summary: z.record(z.string(), z.unknown()).nullable(),
    field_reviews: z.array(fieldReview),
    issue_list: z.array(issue),
    workspace_output: z.record(z.string(), z.unknown()).nullable(),
    result_download_url: z.string().nullable(),
    result_download_mode: downloadMode,
    result_download_warning: z.string().nullable(),
    result_size_bytes: z.number().int().nullable(),
    history_status: z.enum(['recorded', 'unrecorded']),
    generation_usage: tokenUsageSummary.nullable(),
    estimated_cost: estimatedCost.nullable(),
    attempt_count: z.number().int(),
    worker_heartbeat_at: timestamp.nullable(),
    heartbeat_stale: z.boolean(),
    started_at: timestamp.nullable(),
    trace_id: z.string().optional().describe('Administrators only'),
  })
  .meta({ id: 'DocumentRecognitionRun' });

/** The `/result` download: the extraction as the run stored it. */
export const recognitionResult = z.object({
  run_id: z.string().uuid(),
  runtime_agent_id: z.string().uuid(),
  runtime_agent_version_id: z.string().uuid(),
  source: z.object({ filename: z.string(), content_type: z.string(), sha256: z.string() }),
  fields: z.array(
    z.object({ field_id: z.string(), label: z.string(), value: json, confidence: z.number().nullable(), page_number: z.number().int().nullable() }),
  ),
  summary: z.record(z.string(), z.unknown()),
  issue_list: z.array(issue),
});

export const createdRun = run.extend({
  caller_token: z.string().describe('Send it as x-caller-token to read, review and download this run and make more under the same owner'),
});

export const reviewChange = z
  .object({
    value: json.optional().describe('The corrected value; without review_status it marks the field corrected (accepted when it is the extracted value)'),
    review_status: z.enum(REVIEW_STATUSES).optional(),
    reviewer_note: z.string().max(4000).nullable().optional(),
    reviewer_identity: z
      .record(z.string().max(64), z.string().max(200))
      .refine((identity) => Object.keys(identity).length <= 8, 'at most 8 entries')
      .nullable()
      .optional()
      .describe('Who reviews, as they want it shown (a display snapshot: never used for access)'),
  })
  .strict();

const revision = z.object({
  revision_id: z.string().uuid(),
  revision_number: z.number().int(),
  value: json,
  review_status: z.enum(REVIEW_STATUSES),
  reviewer_note: z.string().nullable(),
  previous_value: json,
  previous_review_status: z.enum(REVIEW_STATUSES),
  previous_reviewer_note: z.string().nullable(),
  changed: z.array(z.enum(['value', 'review_status', 'reviewer_note'])),
  reviewer_identity: z.record(z.string(), z.unknown()).nullable(),
  created_at: timestamp,
});

export const reviewed = fieldReview.extend({
  revision_appended: z.boolean().describe('false: the change changed nothing, and no revision was appended'),
  revision: revision.nullable(),
});

export const timeline = z
  .object({
    run_id: z.string().uuid(),
    field_id: z.string(),
    label: z.string(),
    history_status: z.enum(['recorded', 'unrecorded']).describe('`unrecorded`: the run predates the ledger; changes made before it were not kept'),
    baseline: z.object({ value: json, confidence: z.number().nullable(), page_number: z.number().int().nullable(), extracted_at: timestamp.nullable() }),
    current_value: json,
    current_review_status: z.enum(REVIEW_STATUSES),
    current_reviewer_note: z.string().nullable(),
    revision_count: z.number().int(),
    revisions: z.array(revision),
  })
  .meta({ id: 'FieldRevisionTimeline' });

export const overview = z.object({
  run_count: z.number().int(),
  by_status: z.record(z.string(), z.number().int()),
  review_progress: z.record(z.string(), z.number().int()).describe('Succeeded runs by review state'),
  runtime_agent_count: z.number().int(),
});
