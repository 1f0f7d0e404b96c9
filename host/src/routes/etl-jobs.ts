import type { EtlFile, EtlSubmission } from '@agent-host/core';
import { BadRequestError, attachmentDisposition } from '@agent-host/sdk';
import type { Request } from 'restify';
import { z } from 'zod';
import type { RequestContext } from '../access/route-access.js';
import { sendAttachment } from '../http/attachment.js';
import { UploadSlots, withForm } from '../http/upload.js';
import { createdEtlJob, etlJob, etlJobFilters, etlReportFile } from '../schemas/etl.js';
import { pageOf, pagingFields, statusOf } from '../validation.js';
import { route, type AnyRoute, type HostContext, type RouteFactory } from './route.js';

const SOURCE_FIELD = 'source_csv';
const SCHEMA_FIELD = 'target_schema_csv';
const FORM = `multipart/form-data: the source CSV in "${SOURCE_FIELD}", the target-schema CSV in "${SCHEMA_FIELD}", optional "instructions" text`;

/** The job's two files and instructions from a multipart form, handed to `use` while the spooled files exist. */
function withSubmission<T>(req: Request, host: HostContext, use: (submission: EtlSubmission) => Promise<T>) {
  const limits = {
    maxFileBytes: Math.max(host.config.etl.max_source_bytes, host.config.etl.max_schema_bytes),
    maxFiles: 2,
    maxFields: 5,
    fileFields: [SOURCE_FIELD, SCHEMA_FIELD],
  };
  return withForm(req, limits, ({ fields, files }) => {
    const source = files.find((f) => f.field === SOURCE_FIELD);
    const schema = files.find((f) => f.field === SCHEMA_FIELD);
    if (!source || !schema) throw new BadRequestError(`the form needs a file in "${SOURCE_FIELD}" and one in "${SCHEMA_FIELD}"`);
    const instructions = fields.instructions?.trim() || null;
    return use({ source, target_schema: schema, instructions });
  });
}

const publicRequest = (req: Request, context: RequestContext) => ({ headers: req.headers, clientIp: context.origin.clientIp });
const FILES: [string, EtlFile, string][] = [
  ['download', 'output', 'The mapped output CSV (once the job succeeded)'],
  ['source-csv', 'source', 'The source CSV as it was uploaded'],
  ['target-schema-csv', 'target_schema', 'The target-schema CSV as it was uploaded'],
];

/**
 * ETL jobs (spec 4.10): administrators under `/agents/{agent_id}/etl-jobs`; anonymous callers of a `public_anonymous`
 * etl agent under `/public/agents/{agent_id}/etl-jobs`, with identical shapes, seeing only the jobs made under their
 * `x-caller-token`.
 */
export const etlJobRoutes: RouteFactory<'etlJobs'> = (domains, host) => {
  const log = host.logger.child({ component: 'etl-downloads' });
  const uploads = new UploadSlots(host.config.knowledge.upload_concurrency);
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  const jobId = (params: Record<string, string>) => String(params.etl_job_id);
  const routes = (prefix: '' | '/public'): AnyRoute[] => {
    const isPublic = prefix === '/public';
    const access = isPublic ? ({ public: true } as const) : null;
    const who = (req: Request, context: RequestContext) => (isPublic ? publicRequest(req, context) : undefined);
    const publicNotFound: Record<number, string> = isPublic
      ? { 404: 'No active etl agent open to anonymous callers has this id (AGENT_NOT_FOUND), or no job of the caller (ETL_JOB_NOT_FOUND)' }
      : {};
    const createRefusals: Record<number, string> = {
      ...publicNotFound,
      400: `The form lacks "${SOURCE_FIELD}" or "${SCHEMA_FIELD}"`,
      413: 'A file over [etl] max_source_bytes or max_schema_bytes (ETL_FILE_TOO_LARGE, UPLOAD_TOO_LARGE)',
      415: 'A file that is not a CSV (ETL_FILE_TYPE)',
      422: 'A source that is not UTF-8, does not parse, is empty or has only a header; a target schema with a bad row (each named)',
    };
    if (isPublic) createRefusals[429] = 'Too many jobs from this address this minute; see Retry-After';
    else createRefusals[409] = 'Not an etl agent (AGENT_NOT_ETL)';
    const notReady: Record<number, string> = { ...publicNotFound, 409: 'The job has not succeeded (ETL_OUTPUT_NOT_READY)' };
    return [
      route({
        method: 'post',
        path: `${prefix}/agents/:agent_id/etl-jobs`,
        access: access ?? { permission: 'jobs.write' },
        multipart: { field: SOURCE_FIELD, also: { [SCHEMA_FIELD]: { kind: 'file', required: true }, instructions: { kind: 'text', required: false } } },
        summary: `Start an ETL job: map a source CSV onto a target schema (${FORM}); it runs in the background`,
        success: { status: 201, description: 'The job, queued or running', schema: isPublic ? createdEtlJob : etlJob },
        refusals: createRefusals,
        handler: async (req, res, context) => {
          const job = await uploads.run(res, () =>
            withSubmission(req, host, (submission) =>
              isPublic
                ? domains.etlJobs.createAsPublic(agentId(req.params), submission, publicRequest(req, context))
                : domains.etlJobs.createAsAdmin(agentId(req.params), submission, context.operation),
            ),
          );
          res.status(201);
          return job;
        },
      }),
      route({
        method: 'get',
        path: `${prefix}/agents/:agent_id/etl-jobs`,
        access: access ?? { permission: 'jobs.read' },
        summary: isPublic ? "The caller's ETL jobs (those made under its x-caller-token), newest first" : "The agent's ETL jobs, newest first",
        query: z.object({ ...pagingFields, ...etlJobFilters.shape }).strict(),
        success: { status: 200, description: 'A page of jobs', schema: pageOf(etlJob) },
        refusals: publicNotFound,
        handler: async (req, _res, context) =>
          domains.etlJobs.list(agentId(req.params), { ...(context.query.status && { status: context.query.status }) }, context.query, who(req, context)),
      }),
      route({
        method: 'get',
        path: `${prefix}/agents/:agent_id/etl-jobs/:etl_job_id`,
        access: access ?? { permission: 'jobs.read' },
        summary: 'One ETL job: progress, plan, report, and the download triples of its output, source and target schema',
        success: { status: 200, description: 'The job', schema: etlJob },
        refusals: publicNotFound,
        handler: async (req, _res, context) => domains.etlJobs.get(agentId(req.params), jobId(req.params), who(req, context)),
      }),
      route({
        method: 'del',
        path: `${prefix}/agents/:agent_id/etl-jobs/:etl_job_id`,
        access: access ?? { permission: 'jobs.write' },
        summary: 'Delete an ETL job that is not running, with its stored files',
        success: { status: 200, description: 'Deleted', schema: statusOf('deleted') },
        refusals: { ...publicNotFound, 409: 'The job is running (ETL_JOB_RUNNING)' },
        handler: async (req, _res, context) => {
          await domains.etlJobs.delete(agentId(req.params), jobId(req.params), who(req, context));
          return { status: 'deleted' as const };
        },
      }),
      ...FILES.map(([segment, which, description]) =>
        route({
          method: 'get',
          path: `${prefix}/agents/:agent_id/etl-jobs/:etl_job_id/${segment}`,
          access: access ?? { permission: 'jobs.read' },
          summary: `${description}, as an attachment`,
          success: { status: 200, description, contentType: 'text/csv' },
          refusals: which === 'output' ? notReady : publicNotFound,
          handler: async (req, res, context) => {
            const file = await domains.etlJobs.file(agentId(req.params), jobId(req.params), which, who(req, context));
            return sendAttachment(res, file, log, { job_id: jobId(req.params) });
          },
        }),
      ),
      route({
        method: 'get',
        path: `${prefix}/agents/:agent_id/etl-jobs/:etl_job_id/report`,
        access: access ?? { permission: 'jobs.read' },
        summary: 'The report as a JSON attachment: the plan, the counts and the cells with issues',
        success: { status: 200, description: 'The report', schema: etlReportFile },
        refusals: publicNotFound,
        handler: async (req, res, context) => {
          const report = await domains.etlJobs.report(agentId(req.params), jobId(req.params), who(req, context));
          res.header('content-disposition', attachmentDisposition(`etl-report-${report.job_id}.json`));
          return report;
        },
      }),
    ];
  };
  return [...routes(''), ...routes('/public')];
};
