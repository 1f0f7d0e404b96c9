import { ETL_COLUMN_TYPES } from '@agent-host/sdk';
import { z } from 'zod';
import { timestamp } from '../validation.js';
import { tokenUsageSummary } from './usage.js';

/** ETL jobs as responses show them (spec 2.9, 4.10), from core/src/etl. */

const STATUSES = ['queued', 'running', 'recovering', 'succeeded', 'failed'] as const;

export const etlJobFilters = z.object({ status: z.enum(STATUSES).optional() }).strict();

const targetColumn = z.object({
  name: z.string(),
  type: z.enum(ETL_COLUMN_TYPES),
  required: z.boolean(),
  description: z.string(),
  allowed_values: z.array(z.string()),
  format: z.string().nullable(),
});

const plan = z
  .object({
    mappings: z.array(z.object({ target: z.string(), source: z.string().nullable(), conversion: z.string().nullable(), reason: z.string() })),
    unmapped_source_columns: z.array(z.string()),
    planned_by: z.enum(['model', 'deterministic']),
  })
  .meta({ id: 'EtlPlan' });

const report = z
  .object({
    rows_total: z.number().int(),
    rows_written: z.number().int(),
    rows_rejected: z.number().int().describe('Rows left out: a required column without a valid value'),
    cells_coerced: z.number().int(),
    cells_rejected: z.number().int(),
    issues: z.array(z.object({ row: z.number().int(), column: z.string(), kind: z.enum(['coerced', 'rejected']), reason: z.string() })),
    issues_not_listed: z.number().int().describe('Issues past [etl] report_issue_cap, counted but not listed'),
  })
  .meta({ id: 'EtlReport' });

const downloadMode = z.enum(['presigned_url', 'object_store_proxy']).nullable();

export const etlJob = z
  .object({
    job_id: z.string().uuid(),
    agent_id: z.string().uuid(),
    channel: z.enum(['admin', 'public']),
    status: z.enum(STATUSES),
    runtime_key: z.string(),
    instructions: z.string().nullable(),
    rows_total: z.number().int(),
    rows_done: z.number().int().describe('Progress: rows converted so far by the current attempt'),
    source_filename: z.string(),
    source_size_bytes: z.number().int(),
    source_columns: z.array(z.string()),
    target_schema_filename: z.string(),
    target_schema: z.array(targetColumn),
    plan: plan.nullable(),
    report: report.nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    generation_usage: tokenUsageSummary.nullable().describe('What making the column plan used'),
    output_size_bytes: z.number().int().nullable(),
    download_url: z.string().nullable(),
    download_mode: downloadMode,
    download_warning: z.string().nullable(),
    source_download_url: z.string().nullable(),
    source_download_mode: downloadMode,
    source_download_warning: z.string().nullable(),
    target_schema_download_url: z.string().nullable(),
    target_schema_download_mode: downloadMode,
    target_schema_download_warning: z.string().nullable(),
    report_download_url: z.string().nullable(),
    attempt_count: z.number().int(),
    worker_heartbeat_at: timestamp.nullable(),
    heartbeat_stale: z.boolean(),
    created_at: timestamp,
    started_at: timestamp.nullable(),
    completed_at: timestamp.nullable(),
  })
  .meta({ id: 'EtlJob' });

export const createdEtlJob = etlJob.extend({
  caller_token: z.string().describe('Send it as x-caller-token to read this job and make more under the same owner'),
});

/** The report download: what the job detail says of its plan and report, as a file of its own. */
export const etlReportFile = z.object({
  job_id: z.string().uuid(),
  plan: plan.nullable(),
  report: report.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
