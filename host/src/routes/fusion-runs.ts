import type { RunSubmission } from '@agent-host/core';
import { ValidationError } from '@agent-host/sdk';
import type { Request } from 'restify';
import { z } from 'zod';
import { sendAttachment } from '../http/attachment.js';
import { withForm } from '../http/upload.js';
import {
  FUSION_FORM_DESCRIPTION,
  createdPublicFusionRun,
  fusionRun,
  fusionRunBody,
  fusionRunFilters,
  fusionRunWait,
  fusionRuntimeMetadata,
  publicFusionRun,
} from '../schemas/fusion.js';
import { pageOf, pagingFields } from '../validation.js';
import type { RequestContext } from '../access/route-access.js';
import { route, type HostContext, type RouteFactory } from './route.js';

// How many parts a Fusion form may have: a definition has at most 20 inputs, plus agent_version_id.
const MAX_FORM_PARTS = 21;
const VERSION_FIELD = 'agent_version_id';

type Submission = RunSubmission & { agent_version_id?: string };

/**
 * The run's inputs from a JSON body or a multipart form, handed to `use` while the form's files exist. A form's text
 * fields are text inputs (`agent_version_id` aside), its file parts file inputs.
 */
function withSubmission<T>(req: Request, host: HostContext, body: z.output<typeof fusionRunBody> | undefined, use: (submission: Submission) => Promise<T>) {
  if (body) return use({ texts: body.inputs, files: [], ...(body.agent_version_id && { agent_version_id: body.agent_version_id }) });
  const limits = { maxFileBytes: host.config.fusion.max_file_bytes, maxFiles: MAX_FORM_PARTS, maxFields: MAX_FORM_PARTS };
  return withForm(req, limits, ({ fields, files }) => {
    const { [VERSION_FIELD]: version, ...texts } = fields;
    if (version !== undefined && !z.string().uuid().safeParse(version).success) {
      throw new ValidationError([{ loc: ['body', VERSION_FIELD], msg: 'must be a version id (a UUID)', type: 'value_error' }]);
    }
    const parsed = version;
    return use({ texts, files: files.map((file) => ({ slot: file.field, file })), ...(parsed && { agent_version_id: parsed }) });
  });
}

const publicRequest = (req: Request, context: RequestContext) => ({ headers: req.headers, clientIp: context.origin.clientIp });

const runRefusals = {
  409: 'Not a fusion agent (AGENT_NOT_FUSION), or it has no fusion_definition (FUSION_DEFINITION_MISSING)',
  413: 'A file input over its limit (FUSION_INPUT_TOO_LARGE, UPLOAD_TOO_LARGE)',
  415: 'A file input of a type its slot does not take (FUSION_INPUT_TYPE)',
  422: 'An input that is not in the definition, a required input missing, a text for a file slot, or no such agent_version_id',
};
const publicRefusals = {
  401: 'The agent needs an API key: x-agent-api-key is missing, invalid, expired or revoked (PUBLIC_API_KEY_INVALID)',
  404: 'No active fusion agent open to the public has this id (AGENT_NOT_FOUND)',
  409: 'Nothing published yet (FUSION_NOT_PUBLISHED)',
  429: 'The API key or the address made too many requests this minute; see Retry-After',
};

/** Fusion runs (spec 4.11): administrators run the draft or a version; public callers run the published version only. */
export const fusionRunRoutes: RouteFactory<'fusionRuns'> = (domains, host) => {
  const log = host.logger.child({ component: 'fusion-downloads' });
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  const runId = (params: Record<string, string>) => String(params.fusion_run_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/fusion-runs',
      access: { permission: 'jobs.write' },
      summary: 'Run the Fusion agent on inputs (the draft definition, or agent_version_id); waits up to wait_seconds for the result',
      body: fusionRunBody,
      form: { description: FUSION_FORM_DESCRIPTION },
      query: fusionRunWait,
      example: { inputs: { invoice_text: 'name: Acme Ltd\ndate: 2026-11-02\ntotal: 129.50' } },
      success: { status: 201, description: 'The run: ended (succeeded or failed), or still queued or running when the wait ran out', schema: fusionRun },
      refusals: runRefusals,
      handler: async (req, res, { body, query, operation }) => {
        const run = await withSubmission(req, host, body, (submission) =>
          domains.fusionRuns.createAsAdmin(agentId(req.params), submission, query.wait_seconds, operation),
        );
        res.status(201);
        return run;
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/fusion-runs',
      access: { permission: 'jobs.read' },
      summary: "The agent's Fusion runs, newest first, administrator and public ones",
      query: z.object({ ...pagingFields, ...fusionRunFilters.shape }).strict(),
      success: { status: 200, description: 'A page of runs', schema: pageOf(fusionRun) },
      refusals: { 409: 'Not a fusion agent (AGENT_NOT_FUSION)' },
      handler: async (req, _res, { query }) => domains.fusionRuns.listAsAdmin(agentId(req.params), { ...(query.status && { status: query.status }) }, query),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/fusion-runs/:fusion_run_id',
      access: { permission: 'jobs.read' },
      summary: 'One Fusion run with its inputs, outputs, usage, ledger and governance context',
      success: { status: 200, description: 'The run', schema: fusionRun },
      handler: async (req) => domains.fusionRuns.getAsAdmin(agentId(req.params), runId(req.params)),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/fusion-runs/:fusion_run_id/inputs/:input_id/download',
      access: { permission: 'jobs.read' },
      summary: "A run's file input, as an attachment",
      success: { status: 200, description: 'The file as it was uploaded', contentType: 'application/octet-stream' },
      handler: async (req, res) => {
        const file = await domains.fusionRuns.inputFile(agentId(req.params), runId(req.params), String(req.params.input_id));
        return sendAttachment(res, file, log, { run_id: runId(req.params) });
      },
    }),
    route({
      method: 'get',
      path: '/public/agents/:agent_id/fusion-runtime',
      access: { public: true },
      summary: 'What a caller needs to call the published version: its input and output slots (no draft, prompt or governance)',
      success: { status: 200, description: 'The published Fusion runtime', schema: fusionRuntimeMetadata },
      refusals: publicRefusals,
      handler: async (req, _res, context) => domains.fusionRuns.runtimeMetadata(agentId(req.params), publicRequest(req, context)),
    }),
    route({
      method: 'post',
      path: '/public/agents/:agent_id/fusion-runs',
      access: { public: true },
      summary: 'Run the published version on inputs (x-agent-api-key when the agent needs one); waits up to wait_seconds',
      body: fusionRunBody,
      form: { description: FUSION_FORM_DESCRIPTION },
      query: fusionRunWait,
      example: { inputs: { invoice_text: 'name: Acme Ltd\ndate: 2026-11-02\ntotal: 129.50' } },
      success: { status: 201, description: 'The run, without governance fields', schema: createdPublicFusionRun },
      refusals: {
        ...publicRefusals,
        409: 'Nothing published (FUSION_NOT_PUBLISHED), or agent_version_id is not the published version (FUSION_VERSION_NOT_CURRENT)',
        413: runRefusals[413],
        415: runRefusals[415],
        422: runRefusals[422],
      },
      handler: async (req, res, context) => {
        const run = await withSubmission(req, host, context.body, (submission) =>
          domains.fusionRuns.createAsPublic(agentId(req.params), submission, context.query.wait_seconds, publicRequest(req, context)),
        );
        res.status(201);
        return run;
      },
    }),
    route({
      method: 'get',
      path: '/public/agents/:agent_id/fusion-runs',
      access: { public: true },
      summary: "The caller's runs of the published version, newest first (the API key's, or the x-caller-token's)",
      query: z.object(pagingFields).strict(),
      success: { status: 200, description: 'A page of runs', schema: pageOf(publicFusionRun) },
      refusals: publicRefusals,
      handler: async (req, _res, context) => domains.fusionRuns.listAsPublic(agentId(req.params), context.query, publicRequest(req, context)),
    }),
    route({
      method: 'get',
      path: '/public/agents/:agent_id/fusion-runs/:fusion_run_id',
      access: { public: true },
      summary: "One of the caller's runs of the published version",
      success: { status: 200, description: 'The run, without governance fields', schema: publicFusionRun },
      refusals: { ...publicRefusals, 404: 'No such public agent (AGENT_NOT_FOUND), or no run of the caller (FUSION_RUN_NOT_FOUND)' },
      handler: async (req, _res, context) => domains.fusionRuns.getAsPublic(agentId(req.params), runId(req.params), publicRequest(req, context)),
    }),
    route({
      method: 'get',
      path: '/public/agents/:agent_id/fusion-runs/:fusion_run_id/inputs/:input_id/download',
      access: { public: true },
      summary: "A file input of one of the caller's runs, as an attachment",
      success: { status: 200, description: 'The file as it was uploaded', contentType: 'application/octet-stream' },
      refusals: { ...publicRefusals, 404: 'No such public agent, run of the caller (FUSION_RUN_NOT_FOUND) or file input (FUSION_INPUT_NOT_FOUND)' },
      handler: async (req, res, context) => {
        const file = await domains.fusionRuns.inputFile(agentId(req.params), runId(req.params), String(req.params.input_id), publicRequest(req, context));
        return sendAttachment(res, file, log, { run_id: runId(req.params) });
      },
    }),
  ];
};
