import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import {
  ConflictError,
  NotFoundError,
  PayloadTooLargeError,
  TooManyRequestsError,
  UnsupportedMediaTypeError,
  type EtlRuntime,
  type JobScheduler,
  type Logger,
  type ModelProvider,
} from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { Sequelize } from 'sequelize';
import type { Operation } from '../admin/operation.js';
import type { AgentView, Agents } from '../agents/agents.js';
import type { HostConfig } from '../config/schema.js';
import { MinuteBudget } from '../db/minute-budget.js';
import { LeaseWorker } from '../jobs/lease-worker.js';
import { jobModelBinding } from '../models/job-model.js';
import { callerHash, callerTokenFor, sentCallerToken } from '../jobs/public-owner.js';
import type { SpooledFile, UploadedFile } from '../knowledge/documents.js';
import { downloadTriple } from '../services/download-triple.js';
import { objectKeySegment } from '../services/object-key-segment.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import { EtlJobStore, type EtlJobRow } from './job-store.js';
import { parsedRecordsKey } from './parsed-records.js';
import { runJob } from './run-job.js';
import { checkSourceCsv } from './source-csv.js';
import { readTargetSchema } from './target-schema.js';

/** The two files and the instructions of a new job, as the transport read them (spooled to disk). */
export interface EtlSubmission {
  source: UploadedFile & { data: SpooledFile };
  target_schema: UploadedFile & { data: SpooledFile };
  instructions: string | null;
}

/** Who calls a public route: its headers and address. */
export interface PublicEtlRequest {
  headers: Record<string, string | string[] | undefined>;
  clientIp: string | null;
}

/** The files of a job a caller may download. */
export type EtlFile = 'output' | 'source' | 'target_schema';

// Types a CSV arrives as: what browsers, curl and spreadsheets send for a .csv file.
const CSV_TYPES = new Set(['text/csv', 'text/plain', 'application/csv', 'application/vnd.ms-excel', 'text/x-csv']);
const baseType = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

export interface EtlJobsDeps {
  db: Sequelize;
  config: HostConfig;
  agents: Agents;
  runtimes: KeyedRegistry<EtlRuntime>;
  providers: KeyedRegistry<ModelProvider>;
  objectStore: StreamingObjectStore;
  instanceId: string;
  logger: Logger;
}

/**
 * ETL jobs (spec 4.10): a source CSV and a target schema on an `etl` agent, mapped in the background by the
 * `[etl] runtime_key` runtime, with progress, downloads and a report. Administrators use `/agents/{id}/etl-jobs`;
 * anonymous callers of a `public_anonymous` etl agent use the same shapes under `/public/...` and see only the jobs
 * made under their caller token.
 */
export class EtlJobs {
  readonly worker: LeaseWorker<EtlJobRow, EtlJobRow>;
  private readonly store: EtlJobStore;
  private readonly anonymous: MinuteBudget;

  constructor(private readonly deps: EtlJobsDeps) {
    const { config, logger } = deps;
    const store = new EtlJobStore(deps.db, config.etl.job_lease_seconds);
    this.store = store;
    this.worker = new LeaseWorker(
      {
        claim: (owner, leaseSeconds) => store.claim(owner, leaseSeconds),
        recover: (maxAttempts) => store.recover(maxAttempts),
        heartbeat: (id, token, leaseSeconds) => store.heartbeat(id, token, leaseSeconds),
        attempt: (job, signal) => runJob(job, { ...deps, store }, signal),
      },
      {
        enabled: config.etl.enabled,
        concurrency: config.etl.jobs_per_instance,
        leaseSeconds: config.etl.job_lease_seconds,
        supervisorSeconds: config.etl.supervisor_interval_seconds,
        maxAttempts: config.etl.max_attempts,
        what: 'ETL job',
        instanceId: deps.instanceId,
        logger,
      },
    );
    this.anonymous = new MinuteBudget(
      deps.db,
      'etl-anonymous',
      config.etl.anonymous_jobs_per_minute,
      `${config.etl.anonymous_jobs_per_minute} ETL jobs a minute from one address ([etl] anonymous_jobs_per_minute)`,
    );
    deps.agents.addTypeChangeCheck(async (agentId, from) => {
      if (from !== 'etl') return undefined;
      const open = await store.openCount(agentId);
      return open ? `${open} ETL job(s) of the agent have not ended` : undefined;
    });
  }

  start(jobs: JobScheduler): Promise<void> {
    return this.worker.start(jobs);
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  async createAsAdmin(agentId: string, submission: EtlSubmission, op: Operation) {
    const agent = await this.deps.agents.get(agentId);
    if (agent.agent_type !== 'etl')
      throw new ConflictError(`agent ${agentId} is a ${agent.agent_type} agent; ETL jobs are for etl agents`, { code: 'AGENT_NOT_ETL' });
    const job = await this.make(agent, submission, { channel: 'admin', created_by: op.operator.admin_user_id, public_caller_hash: null });
    return this.present(job, this.adminBase(job));
  }

  async createAsPublic(agentId: string, submission: EtlSubmission, request: PublicEtlRequest) {
    const agent = await this.publicAgent(agentId);
    const token = callerTokenFor(sentCallerToken(request.headers));
    const refusal = request.clientIp ? await this.anonymous.take(request.clientIp) : undefined;
    if (refusal) throw new TooManyRequestsError(refusal.detail, refusal.retryAfterSeconds);
    const job = await this.make(agent, submission, { channel: 'public', created_by: null, public_caller_hash: callerHash(token) });
    return { ...(await this.present(job, this.publicBase(job))), caller_token: token };
  }

  async list(agentId: string, filter: { status?: string }, page: { limit: number; cursor?: string }, request?: PublicEtlRequest) {
    let callerHashed: string | undefined;
    if (request) {
      await this.publicAgent(agentId);
      const token = sentCallerToken(request.headers);
      if (!token) return { items: [], next_cursor: null, limit: page.limit };
      callerHashed = callerHash(token);
    } else await this.deps.agents.get(agentId);
    const found = await this.store.page(agentId, { ...filter, ...(callerHashed && { callerHash: callerHashed }) }, page);
    const items = await Promise.all(found.items.map((job) => this.present(job, request ? this.publicBase(job) : this.adminBase(job))));
    return { ...found, items };
  }

  async get(agentId: string, jobId: string, request?: PublicEtlRequest) {
    const job = await this.require(agentId, jobId, request);
    return this.present(job, request ? this.publicBase(job) : this.adminBase(job));
  }

  /** The report download: the job's plan, report and error. */
  async report(agentId: string, jobId: string, request?: PublicEtlRequest) {
    const job = await this.require(agentId, jobId, request);
    return { job_id: job.id, plan: job.plan, report: job.report, error: job.error };
  }

  /** One of a job's files, for the same-origin download routes; the output exists once the job succeeded. */
  async file(agentId: string, jobId: string, which: EtlFile, request?: PublicEtlRequest) {
    const job = await this.require(agentId, jobId, request);
    const key = which === 'output' ? job.output_object_key : which === 'source' ? job.source_object_key : job.target_schema_object_key;
    if (!key) throw new ConflictError(`job ${jobId} has no output: it is ${job.status}`, { code: 'ETL_OUTPUT_NOT_READY' });
    const { body, info } = await this.deps.objectStore.open(key);
    const filename =
      which === 'output' ? `${job.source_filename.replace(/\.csv$/i, '')}-mapped.csv` : which === 'source' ? job.source_filename : job.target_schema_filename;
    return { body, size: info.size, filename, contentType: 'text/csv; charset=utf-8' };
  }

  /** Deletes a job that is not running, with its stored files. */
  async delete(agentId: string, jobId: string, request?: PublicEtlRequest): Promise<void> {
    await this.require(agentId, jobId, request);
    const job = await this.store.delete(agentId, jobId);
    if (!job) throw new ConflictError(`job ${jobId} is running; delete it once it has ended`, { code: 'ETL_JOB_RUNNING' });
    // A job deleted before it ran still has its parsed records; deleting an object that is gone is no error.
    const keys = [job.source_object_key, job.target_schema_object_key, job.output_object_key, parsedRecordsKey(job)].filter((k): k is string => !!k);
    await Promise.all(
      keys.map((key) =>
        this.deps.objectStore.delete(key).catch((error: unknown) => this.deps.logger.warn({ err: error, key }, 'could not remove an ETL file')),
      ),
    );
  }

  private async make(agent: AgentView, submission: EtlSubmission, owner: Pick<EtlJobRow, 'channel' | 'created_by' | 'public_caller_hash'>) {
    const { config, objectStore } = this.deps;
    const checkFile = (file: UploadedFile & { data: SpooledFile }, field: string, max: number) => {
      if (file.data.size > max) throw new PayloadTooLargeError(`${field} is ${file.data.size} bytes; the limit is ${max}`, { code: 'ETL_FILE_TOO_LARGE' });
      if (!CSV_TYPES.has(baseType(file.contentType)))
        throw new UnsupportedMediaTypeError(`${field} is ${baseType(file.contentType)}; send a CSV (text/csv)`, { code: 'ETL_FILE_TYPE' });
    };
    checkFile(submission.source, 'source_csv', config.etl.max_source_bytes);
    checkFile(submission.target_schema, 'target_schema_csv', config.etl.max_schema_bytes);
    const target = readTargetSchema(await readFile(submission.target_schema.data.path), config.etl.max_schema_columns);
    // Beside the spooled upload, in the folder the transport removes once the request is answered.
    const recordsFile = `${submission.source.data.path}.records`;
    const checkStarted = performance.now();
    const source = await checkSourceCsv(submission.source.data.path, config.etl.sample_rows, recordsFile);
    const checked = performance.now();
    const id = randomUUID();
    const recordsKey = parsedRecordsKey({ agent_id: agent.agent_id, id });
    const sourceKey = `etl/${agent.agent_id}/${id}/source/${objectKeySegment(submission.source.filename, 'source.csv')}`;
    const schemaKey = `etl/${agent.agent_id}/${id}/target-schema/${objectKeySegment(submission.target_schema.filename, 'target-schema.csv')}`;
    const put = (key: string, file: UploadedFile & { data: SpooledFile }) =>
      objectStore.putStream(key, createReadStream(file.data.path), { contentType: 'text/csv; charset=utf-8', size: file.data.size });
    const putRecords = async () =>
      objectStore.putStream(recordsKey, createReadStream(recordsFile), { contentType: 'application/octet-stream', size: (await stat(recordsFile)).size });
    let claim: ReturnType<LeaseWorker<EtlJobRow, EtlJobRow>['claimFor']>;
    let job: EtlJobRow;
    try {
      await put(sourceKey, submission.source);
      await put(schemaKey, submission.target_schema);
      await putRecords();
      claim = this.worker.claimFor();
      job = await this.store.insert(
        {
          id,
          agent_id: agent.agent_id,
          ...owner,
          runtime_key: config.etl.runtime_key,
          instructions: submission.instructions,
          model_binding: jobModelBinding(agent, config),
          source_object_key: sourceKey,
          source_filename: submission.source.filename || 'source.csv',
          source_size_bytes: submission.source.data.size,
          source_columns: source.columns,
          sample_rows: source.sample,
          target_schema_object_key: schemaKey,
          target_schema_filename: submission.target_schema.filename || 'target-schema.csv',
          target_schema_size_bytes: submission.target_schema.data.size,
          target_schema: target,
          rows_total: source.rows,
        },
        claim,
      );
    } catch (error) {
      // No job holds the uploads: they go. Once the job is stored, its files stay whatever happens next.
      await Promise.all([sourceKey, schemaKey, recordsKey].map((key) => objectStore.delete(key).catch(() => undefined)));
      throw error;
    }
    this.deps.logger.info(
      { job_id: id, rows: source.rows, stage_ms: { check: Math.round(checked - checkStarted), store: Math.round(performance.now() - checked) } },
      'ETL job stored',
    );
    if (claim) void this.worker.begin(job);
    else await this.worker.kick();
    return job;
  }

  /** An active etl agent open to anonymous callers; any other is "not found", as for no agent. */
  private async publicAgent(agentId: string): Promise<AgentView> {
    const agent = await this.deps.agents.get(agentId).catch(() => undefined);
    if (agent?.agent_type !== 'etl' || agent.status !== 'active' || agent.public_access_mode !== 'public_anonymous')
      throw new NotFoundError(`no public ETL agent ${agentId}`, { code: 'AGENT_NOT_FOUND' });
    return agent;
  }

  /** The job, when the caller may see it: any job of the agent for administrators, the caller's own on the public routes. */
  private async require(agentId: string, jobId: string, request?: PublicEtlRequest): Promise<EtlJobRow> {
    if (request) await this.publicAgent(agentId);
    else await this.deps.agents.get(agentId);
    const job = await this.store.find(agentId, jobId);
    const token = request ? sentCallerToken(request.headers) : null;
    if (!job || (request && (!token || job.public_caller_hash !== callerHash(token))))
      throw new NotFoundError(`no ETL job ${jobId}${request ? ' of yours' : ''} on agent ${agentId}`, { code: 'ETL_JOB_NOT_FOUND' });
    return job;
  }

  private adminBase = (job: EtlJobRow) => `/agents/${job.agent_id}/etl-jobs/${job.id}`;
  private publicBase = (job: EtlJobRow) => `/public/agents/${job.agent_id}/etl-jobs/${job.id}`;

  private async present(job: EtlJobRow, base: string) {
    const [output, source, schema] = await Promise.all([
      downloadTriple(this.deps.objectStore, job.output_object_key, `${base}/download`),
      downloadTriple(this.deps.objectStore, job.source_object_key, `${base}/source-csv`),
      downloadTriple(this.deps.objectStore, job.target_schema_object_key, `${base}/target-schema-csv`),
    ]);
    return {
      job_id: job.id,
      agent_id: job.agent_id,
      channel: job.channel,
      status: job.status,
      runtime_key: job.runtime_key,
      instructions: job.instructions,
      rows_total: job.rows_total,
      rows_done: job.rows_done,
      source_filename: job.source_filename,
      source_size_bytes: Number(job.source_size_bytes),
      source_columns: job.source_columns,
      target_schema_filename: job.target_schema_filename,
      target_schema: job.target_schema,
      plan: job.plan,
      report: job.report,
      error: job.error,
      generation_usage: job.generation_usage,
      output_size_bytes: job.output_size_bytes === null ? null : Number(job.output_size_bytes),
      download_url: output.url,
      download_mode: output.mode,
      download_warning: output.warning,
      source_download_url: source.url,
      source_download_mode: source.mode,
      source_download_warning: source.warning,
      target_schema_download_url: schema.url,
      target_schema_download_mode: schema.mode,
      target_schema_download_warning: schema.warning,
      report_download_url: job.report ? `${base}/report` : null,
      attempt_count: job.attempt_count,
      worker_heartbeat_at: job.worker_heartbeat_at?.toISOString() ?? null,
      heartbeat_stale: job.heartbeat_stale ?? false,
      created_at: job.created_at.toISOString(),
      started_at: job.started_at?.toISOString() ?? null,
      completed_at: job.completed_at?.toISOString() ?? null,
    };
  }
}
