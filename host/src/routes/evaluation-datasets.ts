import { UnsupportedMediaTypeError } from '@agent-host/sdk';
import { z } from 'zod';
import { sendAttachment } from '../http/attachment.js';
import { UploadSlots, withUpload } from '../http/upload.js';
import { datasetCreateBody, datasetFilters, evaluationDataset, itemsPage, offsetPaging, recognitionImportBody } from '../schemas/evaluation.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const UPLOAD_FIELD = 'file';
const notFound = { 404: 'No such evaluation dataset (EVALUATION_DATASET_NOT_FOUND)' };
const CSV_TYPES = new Set(['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel']);

/** Evaluation datasets (spec 4.9): create, list, read, import a CSV, freeze into a snapshot, items, source CSV, delete. */
export const evaluationDatasetRoutes: RouteFactory<'evaluationDatasets'> = (domains, app) => {
  const log = app.logger.child({ component: 'dataset-download' });
  const id = (params: Record<string, string>) => String(params.dataset_id);
  const uploads = new UploadSlots(app.config.knowledge.upload_concurrency);
  return [
    route({
      method: 'post',
      path: '/evaluation-datasets',
      access: { permission: 'evaluation.write' },
      summary: 'Create an evaluation dataset (empty; import a CSV into it)',
      body: datasetCreateBody,
      example: { name: 'Returns FAQ', task_type: 'qa' },
      success: { status: 201, description: 'The dataset', schema: evaluationDataset },
      handler: async (_req, res, { body, operation }) => {
        res.status(201);
        return domains.evaluationDatasets.create(body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/evaluation-datasets',
      access: { permission: 'evaluation.read' },
      summary: 'Evaluation datasets and frozen snapshots, newest first; filter by task_type or frozen',
      query: datasetFilters.extend(pagingFields),
      success: { status: 200, description: 'A page of datasets', schema: pageOf(evaluationDataset) },
      handler: async (_req, _res, { query: { limit, cursor, ...filters } }) => domains.evaluationDatasets.list(filters, { limit, cursor }),
    }),
    route({
      method: 'get',
      path: '/evaluation-datasets/:dataset_id',
      access: { permission: 'evaluation.read' },
      summary: 'One dataset: its task_type, whether it is frozen, its item count and source CSV fields',
      success: { status: 200, description: 'The dataset', schema: evaluationDataset },
      refusals: notFound,
      handler: async (req) => domains.evaluationDatasets.get(id(req.params)),
    }),
    route({
      method: 'del',
      path: '/evaluation-datasets/:dataset_id',
      access: { permission: 'evaluation.write' },
      summary: 'Delete a dataset with its items and source CSV; refused while runs or frozen snapshots reference it',
      success: { status: 200, description: 'Deleted', schema: z.object({ status: z.literal('deleted'), dataset_id: z.string().uuid() }) },
      refusals: {
        ...notFound,
        409: 'Runs or frozen snapshots reference the dataset (DATASET_REFERENCED_BY_EVALUATION_RUNS); detail counts them and names the agents',
      },
      handler: async (req, _res, { operation }) => domains.evaluationDatasets.delete(id(req.params), operation),
    }),
    route({
      method: 'post',
      path: '/evaluation-datasets/:dataset_id/import',
      access: { permission: 'evaluation.write' },
      multipart: { field: UPLOAD_FIELD },
      summary: 'Replace the items with the rows of a CSV (multipart/form-data, field "file"); the file is kept as the source CSV',
      success: { status: 200, description: 'The dataset with its new item count and source CSV fields', schema: evaluationDataset },
      refusals: {
        ...notFound,
        400: 'The body is not multipart/form-data with a file in "file" (BAD_REQUEST)',
        409: 'A frozen snapshot never changes (EVALUATION_DATASET_FROZEN); a document_recognition dataset takes no CSV (EVALUATION_DATASET_TASK_TYPE)',
        413: 'The file is larger than [evaluation] csv_max_bytes',
        415: 'The file is not CSV',
        422: 'A row or column is wrong: each issue names the row (1 is the header) and the column; nothing was imported',
      },
      handler: async (req, res, { operation }) => {
        const upload = {
          field: UPLOAD_FIELD,
          maxBytes: domains.evaluationDatasets.csvMaxBytes,
          checkContentType: (type: string) => {
            if (!CSV_TYPES.has(type.split(';', 1)[0]!.trim().toLowerCase())) {
              throw new UnsupportedMediaTypeError(`expected a CSV file (text/csv), not ${type}`);
            }
          },
        };
        return uploads.run(res, () => withUpload(req, upload, (file) => domains.evaluationDatasets.import(id(req.params), file, operation)));
      },
    }),
    route({
      method: 'post',
      path: '/evaluation-datasets/:dataset_id/document-recognition-runs/import',
      access: { permission: 'evaluation.write' },
      summary: 'Add reviewed document-recognition runs to a document_recognition dataset, one item each (expected output: the reviewed field values)',
      body: recognitionImportBody,
      success: { status: 200, description: 'The dataset', schema: evaluationDataset },
      refusals: {
        ...notFound,
        409: 'A frozen snapshot (EVALUATION_DATASET_FROZEN), not a document_recognition dataset (EVALUATION_DATASET_TASK_TYPE), a run not reviewed (DOCUMENT_RECOGNITION_RUN_NOT_REVIEWED), or one already in the dataset (EVALUATION_ITEM_DUPLICATE_RUN)',
        422: 'A run listed twice, or no such run',
      },
      handler: async (req, _res, { body, operation }) => domains.evaluationDatasets.importRecognitionRuns(id(req.params), body.run_id_list, operation),
    }),
    route({
      method: 'post',
      path: '/evaluation-datasets/:dataset_id/freeze',
      access: { permission: 'evaluation.write' },
      summary: "Freeze the dataset into an immutable snapshot (a new frozen dataset with copies of the items and the source CSV, or of the items' documents)",
      success: { status: 201, description: 'The frozen snapshot', schema: evaluationDataset },
      refusals: {
        ...notFound,
        400: 'No items (EVALUATION_DATASET_EMPTY), or items but no persisted source CSV (EVALUATION_DATASET_NO_SOURCE_CSV)',
        409: 'The dataset is a frozen snapshot already (EVALUATION_DATASET_FROZEN)',
      },
      handler: async (req, res, { operation }) => {
        const snapshot = await domains.evaluationDatasets.freeze(id(req.params), operation);
        res.status(201);
        return snapshot;
      },
    }),
    route({
      method: 'get',
      path: '/evaluation-datasets/:dataset_id/items',
      access: { permission: 'evaluation.read' },
      summary: 'The items in CSV order, by offset and limit',
      query: z.object(offsetPaging).strict(),
      success: { status: 200, description: 'A page of items with the total', schema: itemsPage },
      refusals: notFound,
      handler: async (req, _res, { query }) => domains.evaluationDatasets.items(id(req.params), query),
    }),
    route({
      method: 'get',
      path: '/evaluation-datasets/:dataset_id/source-csv',
      access: { permission: 'evaluation.read' },
      summary: 'The source CSV as it was uploaded, through the host (same-origin proxy), as an attachment',
      success: { status: 200, description: 'The original CSV bytes', contentType: 'text/csv' },
      refusals: { 404: 'No such dataset (EVALUATION_DATASET_NOT_FOUND), or it has no source CSV (EVALUATION_SOURCE_CSV_NOT_FOUND)' },
      handler: async (req, res) => {
        const file = await domains.evaluationDatasets.openSourceCsv(id(req.params));
        return sendAttachment(res, file, log, { dataset_id: id(req.params) });
      },
    }),
  ];
};
