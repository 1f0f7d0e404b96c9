import { z } from 'zod';
import { timestamp } from '../validation.js';

/** Evaluation datasets and items as requests and responses show them (spec 2.9, 4.9), from core/src/evaluation. */

const TASK_TYPES = ['qa', 'document_recognition'] as const;

export const datasetCreateBody = z
  .object({
    name: z.string().trim().min(1).max(200),
    description: z.string().max(5000).optional(),
    task_type: z.enum(TASK_TYPES).describe('`qa`: questions for chat agents; `document_recognition`: reviewed document-recognition runs'),
  })
  .strict();

export const datasetFilters = z
  .object({
    task_type: z.enum(TASK_TYPES).optional(),
    frozen: z
      .enum(['true', 'false'])
      .transform((v) => v === 'true')
      .optional(),
  })
  .strict();

export const evaluationDataset = z
  .object({
    dataset_id: z.string().uuid(),
    name: z.string(),
    description: z.string(),
    task_type: z.enum(TASK_TYPES),
    frozen: z.boolean().describe('A frozen snapshot: its items and source CSV never change; runs use only frozen snapshots'),
    parent_dataset_id: z.string().uuid().nullable().describe('For a frozen snapshot, the dataset it was frozen from'),
    frozen_at: timestamp.nullable(),
    item_count: z.number().int(),
    snapshot_count: z.number().int().describe('Frozen snapshots made from this dataset'),
    source_csv_filename: z.string().nullable(),
    source_csv_content_type: z.string().nullable(),
    source_csv_size_bytes: z.number().int().nullable(),
    source_csv_uploaded_at: timestamp.nullable(),
    source_csv_download_url: z.string().nullable().describe('A presigned URL, or this dataset’s own /source-csv route (object_store_proxy)'),
    source_csv_download_mode: z.enum(['presigned_url', 'object_store_proxy']).nullable(),
    source_csv_download_warning: z.string().nullable(),
    created_by: z.string().uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'EvaluationDataset' });

export const datasetItem = z
  .object({
    item_id: z.string().uuid(),
    position: z.number().int().describe('1 for the first data row of the CSV'),
    question: z.string(),
    expected_answers: z.array(z.string()).describe('Every accepted answer, in column order'),
    domain: z.string().nullable(),
    difficulty: z.string().nullable(),
    source: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'EvaluationDatasetItem' });

export const offsetPaging = {
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(100),
};

export const itemsPage = z.object({ items: z.array(datasetItem), total: z.number().int(), offset: z.number().int(), limit: z.number().int() });
