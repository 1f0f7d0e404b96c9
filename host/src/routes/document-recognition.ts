import type { RecognitionCaller, RecognitionFile } from '@agent-host/core';
import { BadRequestError, ValidationError, attachmentDisposition } from '@agent-host/sdk';
import type { Request } from 'restify';
import { z } from 'zod';
import type { RequestContext } from '../access/route-access.js';
import { sendAttachment } from '../http/attachment.js';
import { UploadSlots, withForm } from '../http/upload.js';
import {
  adminRunFilters,
  createdRun,
  listedRun,
  overview,
  recognitionResult,
  registeredRuntimeAgent,
  reviewChange,
  reviewed,
  run,
  runFilters,
  recognitionRunWait,
  runtimeAgent,
  timeline,
} from '../schemas/document-recognition.js';
import { pageOf, pagingFields, statusOf } from '../validation.js';
import { route, type AnyRoute, type RouteFactory } from './route.js';

const FILE_FIELD = 'file';
const AGENT_FIELD = 'runtime_agent_id';

const FILES: [string, RecognitionFile, string, string][] = [
  ['source-document', 'source-document', 'The document as it was uploaded', 'application/octet-stream'],
  ['source-pdf', 'source-pdf', 'The PDF rendition (the original PDF, or one the recognizer made)', 'application/pdf'],
];

const publicRequest = (req: Request, context: RequestContext) => ({ headers: req.headers, clientIp: context.origin.clientIp });
const publicCaller = (req: Request, context: RequestContext): RecognitionCaller => ({ public: publicRequest(req, context) });
const adminCaller = (context: RequestContext): RecognitionCaller => ({ admin: { admin_user_id: context.operation.operator.admin_user_id } });

/**
 * Document recognition (spec 4.10): runtime agents (registered by administrators, listed publicly), runs made by
 * uploading a file, their field reviews and timelines, and the downloads of each run. The run routes exist twice:
 * under `/document-recognition/runs` for the caller that made the run (its `x-caller-token`), and under
 * `/admin/document-recognition/runs` for administrators, over every run.
 */
export const documentRecognitionRoutes: RouteFactory<'runtimeAgents' | 'documentRecognition'> = (domains, host) => {
  const log = host.logger.child({ component: 'document-recognition-downloads' });
  const uploads = new UploadSlots(host.config.knowledge.upload_concurrency);
  const runId = (params: Record<string, string>) => String(params.recognition_run_id);
  const fieldId = (params: Record<string, string>) => String(params.field_id);
  const runRoutes = (admin: boolean): AnyRoute[] => {
    const prefix = admin ? '/admin/document-recognition/runs' : '/document-recognition/runs';
    const read = admin ? ({ permission: 'jobs.read' } as const) : ({ public: true } as const);
    const write = admin ? ({ permission: 'document_recognition.write' } as const) : ({ public: true } as const);
    const who = (req: Request, context: RequestContext) => (admin ? adminCaller(context) : publicCaller(req, context));
    const notFound = {
      404: admin ? 'No such run (DOCUMENT_RECOGNITION_RUN_NOT_FOUND)' : 'No run of the caller has this id (DOCUMENT_RECOGNITION_RUN_NOT_FOUND)',
    };
    return [
      route({
        method: 'get',
        path: prefix,
        access: read,
        summary: admin ? 'Every document-recognition run, newest first, filtered' : "The caller's runs (made under its x-caller-token), newest first",
        query: z.object({ ...pagingFields, ...(admin ? adminRunFilters : runFilters).shape }).strict(),
        success: { status: 200, description: 'A page of runs, projected (no fields, previews or outputs)', schema: pageOf(listedRun) },
        handler: async (req, _res, context) => {
          const { limit, cursor, ...filter } = context.query as { limit: number; cursor?: string } & z.output<typeof adminRunFilters>;
          return domains.documentRecognition.list(filter, { limit, ...(cursor && { cursor }) }, who(req, context));
        },
      }),
      route({
        method: 'get',
        path: `${prefix}/:recognition_run_id`,
        access: read,
        summary: 'One run: its binding, downloads, previews, summary, fields with their reviews, issues and outputs',
        success: { status: 200, description: 'The run', schema: run },
        refusals: notFound,
        handler: async (req, _res, context) => domains.documentRecognition.get(runId(req.params), who(req, context)),
      }),
      route({
        method: 'patch',
        path: `${prefix}/:recognition_run_id/field-reviews/:field_id`,
        access: write,
        summary: 'Review one field: a corrected value, a review status, a note; an effective change appends a revision to its ledger',
        body: reviewChange,
        example: { value: 'INV-2026-0042', reviewer_note: 'read from the header', reviewer_identity: { display_name: 'Dana' } },
        success: {
          status: 200,
          description: 'The field after the change, and the revision it appended (none for a change that changed nothing)',
          schema: reviewed,
        },
        refusals: {
          404: 'No such run (of the caller) or field (DOCUMENT_RECOGNITION_RUN_NOT_FOUND, DOCUMENT_RECOGNITION_FIELD_NOT_FOUND)',
          422: 'An empty change, "corrected" with the extracted value, or "accepted" with another value',
        },
        handler: async (req, _res, context) => domains.documentRecognition.review(runId(req.params), fieldId(req.params), context.body, who(req, context)),
      }),
      route({
        method: 'get',
        path: `${prefix}/:recognition_run_id/field-reviews/:field_id/revisions`,
        access: read,
        summary: "One field's timeline: the extracted baseline, the current review, and every revision in order",
        success: { status: 200, description: 'The timeline', schema: timeline },
        refusals: { 404: 'No such run (of the caller) or field' },
        handler: async (req, _res, context) => domains.documentRecognition.revisions(runId(req.params), fieldId(req.params), who(req, context)),
      }),
      ...FILES.map(([segment, which, description, contentType]) =>
        route({
          method: 'get',
          path: `${prefix}/:recognition_run_id/${segment}`,
          access: read,
          summary: `${description}, as an attachment (the same-origin proxy when the object store gives no public URL)`,
          success: { status: 200, description, contentType },
          refusals: { 404: 'No such run (of the caller), or the run has not made this file (DOCUMENT_RECOGNITION_FILE_NOT_FOUND)' },
          handler: async (req, res, context) => {
            const file = await domains.documentRecognition.file(runId(req.params), which, who(req, context));
            return sendAttachment(res, file, log, { run_id: runId(req.params) });
          },
        }),
      ),
      route({
        method: 'get',
        path: `${prefix}/:recognition_run_id/result`,
        access: read,
        summary: 'The extraction as the run produced it, as a JSON attachment (reviews are in field_reviews and the timelines)',
        success: { status: 200, description: 'The structured result', schema: recognitionResult },
        refusals: { 404: 'No such run (of the caller), or it has not succeeded (DOCUMENT_RECOGNITION_FILE_NOT_FOUND)' },
        handler: async (req, res, context) => {
          const result = await domains.documentRecognition.result(runId(req.params), who(req, context));
          res.header('content-disposition', attachmentDisposition(result.filename));
          return result.body;
        },
      }),
      route({
        method: 'get',
        path: `${prefix}/:recognition_run_id/preview-pages/:page_number`,
        access: read,
        summary: 'The PNG preview of one of the first pages',
        success: { status: 200, description: 'The preview image', contentType: 'image/png' },
        refusals: {
          404: 'No such run (of the caller), or no preview of that page (DOCUMENT_RECOGNITION_FILE_NOT_FOUND)',
          422: 'page_number is not a page number (1 or more)',
        },
        handler: async (req, res, context) => {
          const page = Number(req.params.page_number);
          if (!Number.isInteger(page) || page < 1)
            throw new ValidationError([{ loc: ['path', 'page_number'], msg: 'must be a page number (1 or more)', type: 'value_error' }]);
          const file = await domains.documentRecognition.file(runId(req.params), { preview: page }, who(req, context));
          return sendAttachment(res, file, log, { run_id: runId(req.params) });
        },
      }),
    ];
  };
  return [
    route({
      method: 'get',
      path: '/document-recognition/runtime-agents',
      access: { public: true },
      summary: 'The runtime agents that take runs now, with their upload slot and execution policy',
      success: { status: 200, description: 'The runtime agents', schema: z.object({ items: z.array(runtimeAgent) }) },
      handler: async () => domains.runtimeAgents.list(false),
    }),
    route({
      method: 'get',
      path: '/document-recognition/runtime-agents/:runtime_agent_id',
      access: { public: true },
      summary: 'One runtime agent: its published version, upload-slot resolution and execution policy summary',
      success: { status: 200, description: 'The runtime agent', schema: runtimeAgent },
      refusals: { 404: 'No runtime agent with this id takes runs now (RUNTIME_AGENT_NOT_FOUND)' },
      handler: async (req) => domains.runtimeAgents.get(String(req.params.runtime_agent_id), false),
    }),
    route({
      method: 'post',
      path: '/document-recognition/runs',
      access: { public: true },
      multipart: { field: FILE_FIELD, also: { [AGENT_FIELD]: { kind: 'text', required: true } } },
      query: recognitionRunWait,
      summary: `Upload a document (multipart: the file in "${FILE_FIELD}", the runtime agent in "${AGENT_FIELD}") and start its recognition`,
      success: { status: 201, description: 'The run: queued or running, or ended when wait_seconds let it', schema: createdRun },
      refusals: {
        400: `The form lacks "${FILE_FIELD}" or "${AGENT_FIELD}", or the file is empty (DOCUMENT_EMPTY)`,
        404: 'No such runtime agent (RUNTIME_AGENT_NOT_FOUND)',
        409: 'The runtime agent takes no runs now (RUNTIME_AGENT_UNAVAILABLE)',
        413: 'A file over the upload slot limit (DOCUMENT_TOO_LARGE, UPLOAD_TOO_LARGE)',
        415: 'A type the runtime agent does not take (DOCUMENT_TYPE), or content that is not what its type says',
        429: 'Too many runs from this address this minute; see Retry-After',
      },
      handler: async (req, res, context) => {
        const limits = { maxFileBytes: host.config.document_recognition.max_file_bytes, maxFiles: 1, maxFields: 4, fileFields: [FILE_FIELD] };
        const created = await uploads.run(res, () =>
          withForm(req, limits, ({ fields, files }) => {
            const file = files[0];
            const agent = fields[AGENT_FIELD]?.trim();
            if (!file || !agent) throw new BadRequestError(`the form needs a file in "${FILE_FIELD}" and a runtime agent id in "${AGENT_FIELD}"`);
            return domains.documentRecognition.create({ runtime_agent_id: agent, file }, context.query.wait_seconds, publicRequest(req, context));
          }),
        );
        res.status(201);
        return created;
      },
    }),
    ...runRoutes(false),
    route({
      method: 'get',
      path: '/admin/document-recognition/overview',
      access: { permission: 'jobs.read' },
      summary: 'Runs by status and review progress, and how many runtime agents are registered',
      success: { status: 200, description: 'The overview', schema: overview },
      handler: async () => domains.documentRecognition.overview(),
    }),
    ...runRoutes(true),
    route({
      method: 'get',
      path: '/admin/document-recognition/runtime-agents',
      access: { permission: 'jobs.read' },
      summary: 'Every registered runtime agent, with why one takes no runs and its model binding',
      success: { status: 200, description: 'The runtime agents', schema: z.object({ items: z.array(runtimeAgent) }) },
      handler: async () => domains.runtimeAgents.list(true),
    }),
    route({
      method: 'put',
      path: '/admin/document-recognition/runtime-agents/:agent_id',
      access: { permission: 'document_recognition.write' },
      summary: 'Register a published fusion agent (one file input, a document_field_set output) as a runtime agent; audited',
      success: { status: 200, description: 'The runtime agent', schema: registeredRuntimeAgent },
      refusals: {
        404: 'No such agent (AGENT_NOT_FOUND)',
        409: 'Not a fusion agent (AGENT_NOT_FUSION), or not published (RUNTIME_AGENT_NOT_PUBLISHED)',
        422: 'The published definition cannot serve document recognition; each reason is named (RUNTIME_AGENT_UNSUITABLE)',
      },
      handler: async (req, _res, context) => domains.runtimeAgents.register(String(req.params.agent_id), context.operation),
    }),
    route({
      method: 'del',
      path: '/admin/document-recognition/runtime-agents/:agent_id',
      access: { permission: 'document_recognition.write' },
      summary: 'Remove a runtime agent: it takes no new runs; its runs stay readable and reviewable; audited',
      success: { status: 200, description: 'Removed', schema: statusOf('removed') },
      refusals: { 404: 'Not a registered runtime agent (RUNTIME_AGENT_NOT_FOUND)' },
      handler: async (req, _res, context) => {
        await domains.runtimeAgents.remove(String(req.params.agent_id), context.operation);
        return { status: 'removed' as const };
      },
    }),
  ];
};
