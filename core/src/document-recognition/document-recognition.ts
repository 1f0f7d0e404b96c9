import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  BadRequestError,
  NotFoundError,
  PayloadTooLargeError,
  TooManyRequestsError,
  UnsupportedMediaTypeError,
  type DocumentParser,
  type DocumentRecognizer,
  type FusionRuntime,
  type JobScheduler,
  type Logger,
  type ModelProvider,
} from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { Sequelize } from 'sequelize';
import type { Agents } from '../agents/agents.js';
import type { HostConfig } from '../config/schema.js';
import { MinuteBudget } from '../db/minute-budget.js';
import { acceptsType } from '../fusion/run-inputs.js';
import { LeaseWorker } from '../jobs/lease-worker.js';
import { callerHash, callerTokenFor, sentCallerToken } from '../jobs/public-owner.js';
import type { SpooledFile, UploadedFile } from '../knowledge/documents.js';
import { newTraceId } from '../observability/trace-id.js';
import { downloadTriple } from '../services/download-triple.js';
import { objectKeySegment } from '../services/object-key-segment.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import type { PricingTable } from '../usage/cost.js';
import { applyReview, presentFieldReview, presentRevision, presentTimeline, type ReviewChange } from './field-reviews.js';
import { attemptRun, type RecognitionResult } from './run-attempt.js';
import { RecognitionRunStore, reviewState, type FieldRow, type RecognitionRunRow, type ReviewState } from './run-store.js';
import type { RuntimeAgents } from './runtime-agents.js';

const TERMINAL = new Set(['succeeded', 'failed']);

export interface DocumentRecognitionDeps {
  db: Sequelize;
  config: HostConfig;
  agents: Agents;
  runtimeAgents: RuntimeAgents;
  recognizers: KeyedRegistry<DocumentRecognizer>;
  parsers: KeyedRegistry<DocumentParser>;
  runtimes: KeyedRegistry<FusionRuntime>;
  providers: KeyedRegistry<ModelProvider>;
  objectStore: StreamingObjectStore;
  pricing: PricingTable;
  instanceId: string;
  logger: Logger;
}

/** The upload of a new run, as the transport read it (spooled to disk). */
export interface RecognitionSubmission {
  runtime_agent_id: string;
  file: UploadedFile & { data: SpooledFile };
}

/** A caller of the public routes: its headers (the caller token) and address. */
export interface PublicCaller {
  headers: Record<string, string | string[] | undefined>;
  clientIp: string | null;
}

/** Who calls: a public caller, or an administrator (runs are made only by public callers; administrators read and review them all). */
export type RecognitionCaller = { public: PublicCaller } | { admin: { admin_user_id: string } };

/** The files of a run a caller may download. */
export type RecognitionFile = 'source-document' | 'source-pdf' | { preview: number };

const isAdmin = (caller: RecognitionCaller): caller is { admin: { admin_user_id: string } } => 'admin' in caller;

/**
 * Document-recognition runs (spec 4.10): an upload bound to a runtime agent's published version, extracted under a
 * lease by a {@link LeaseWorker} (recovered when its worker stops, ended once), read with its fields, previews and
 * downloads, and reviewed field by field into an append-only ledger. Public callers see only the runs made under
 * their caller token (`x-caller-token`); administrators see every run under `/admin/document-recognition`.
 */
export class DocumentRecognition {
  readonly worker: LeaseWorker<RecognitionRunRow, RecognitionRunRow>;
  private readonly store: RecognitionRunStore;
  private readonly anonymous: MinuteBudget;

  constructor(private readonly deps: DocumentRecognitionDeps) {
    const policy = deps.config.document_recognition;
    this.store = new RecognitionRunStore(deps.db, policy.run_lease_seconds);
    const store = this.store;
    this.worker = new LeaseWorker(
      {
        claim: (owner, leaseSeconds) => store.claim(owner, leaseSeconds),
        recover: (maxAttempts) => store.recover(maxAttempts),
        heartbeat: (id, token, leaseSeconds) => store.heartbeat(id, token, leaseSeconds),
        async attempt(run, signal) {
          const outcome = await attemptRun(run, deps, signal);
          if (signal.aborted) return undefined;
          const ended = await store.finish(run.id, run.lease_token!, outcome);
          if (!ended) deps.logger.warn({ run_id: run.id }, 'a document-recognition run ended after another worker took it over');
          return ended;
        },
      },
      {
        enabled: policy.enabled,
        concurrency: policy.runs_per_instance,
        leaseSeconds: policy.run_lease_seconds,
        supervisorSeconds: policy.supervisor_interval_seconds,
        maxAttempts: policy.max_attempts,
        what: 'document-recognition run',
        instanceId: deps.instanceId,
        logger: deps.logger,
      },
    );
    this.anonymous = new MinuteBudget(
      deps.db,
      'document-recognition',
      policy.anonymous_runs_per_minute,
      `${policy.anonymous_runs_per_minute} document-recognition runs a minute from one address ([document_recognition] anonymous_runs_per_minute)`,
    );
    deps.agents.addTypeChangeCheck(async (agentId, from) => {
      if (from !== 'fusion') return undefined;
      const open = await this.store.openCount(agentId);
      return open ? `${open} document-recognition run(s) of the agent have not ended` : undefined;
    });
  }

  start(jobs: JobScheduler): Promise<void> {
    return this.worker.start(jobs);
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  /**
   * `POST /document-recognition/runs`: checks the upload against the runtime agent's slot (size 413, type 415, empty
   * 400) before anything is stored, stores it, and makes the run; waits up to `wait` seconds for it to end.
   */
  async create(submission: RecognitionSubmission, wait: number | undefined, request: PublicCaller) {
    const { config, objectStore } = this.deps;
    const resolved = await this.deps.runtimeAgents.forRun(submission.runtime_agent_id);
    const policy = this.deps.runtimeAgents.uploadPolicy(resolved.slots);
    const { file } = submission;
    if (file.data.size === 0) throw new BadRequestError(`"${file.filename}" is empty`, { code: 'DOCUMENT_EMPTY' });
    if (file.data.size > policy.max_size_bytes) {
      throw new PayloadTooLargeError(`"${file.filename}" is ${file.data.size} bytes; this runtime agent takes at most ${policy.max_size_bytes}`, {
        code: 'DOCUMENT_TOO_LARGE',
      });
    }
    if (!acceptsType(policy.accepted_content_types, file.contentType) || policy.accepted_content_types.length === 0) {
      throw new UnsupportedMediaTypeError(
        `"${file.filename}" is ${file.contentType.split(';', 1)[0]}; this runtime agent takes ${policy.accepted_content_types.join(', ') || 'no type the recognizer prepares'}`,
        { code: 'DOCUMENT_TYPE' },
      );
    }
    const callerToken = callerTokenFor(sentCallerToken(request.headers));
    const refusal = request.clientIp ? await this.anonymous.take(request.clientIp) : undefined;
    if (refusal) throw new TooManyRequestsError(refusal.detail, refusal.retryAfterSeconds);
    const id = randomUUID();
    const sourceKey = `document-recognition/${id}/source/${objectKeySegment(file.filename, 'document')}`;
    await objectStore.putStream(sourceKey, createReadStream(file.data.path), { contentType: file.contentType, size: file.data.size });
    const claim = this.worker.claimFor();
    let run: RecognitionRunRow;
    try {
      run = await this.store.insert(
        {
          id,
          runtime_agent_id: resolved.agent.agent_id,
          runtime_agent_version_id: resolved.versionId,
          runtime_agent_type_snapshot: resolved.agent.agent_type,
          runtime_binding_snapshot: {
            agent_name: resolved.agent.name,
            definition: resolved.definition,
            upload_slot: resolved.slots.upload.name,
            output_slot: resolved.slots.output.name,
            model_binding: resolved.binding,
            recognizer_key: config.document_recognition.recognizer_key,
          },
          source_object_key: sourceKey,
          source_filename: file.filename || 'document',
          source_content_type: file.contentType,
          source_size_bytes: file.data.size,
          source_sha256: file.data.sha256,
          trace_id: newTraceId(),
          public_caller_hash: callerHash(callerToken),
        },
        claim,
      );
    } catch (error) {
      // No run holds the upload: it goes. Once the run is stored, its document stays whatever happens next.
      await objectStore.delete(sourceKey).catch(() => undefined);
      throw error;
    }
    if (claim) void this.worker.begin(run);
    else await this.worker.kick();
    const seconds = Math.min(wait ?? config.document_recognition.wait_seconds, 300);
    const settled = await this.worker.settle(
      run,
      seconds * 1000,
      (row) => TERMINAL.has(row.status),
      () => this.store.find(id),
    );
    return { ...(await this.present(settled, { public: request })), caller_token: callerToken };
  }

  /** The caller's runs (an administrator's: every run, filtered), newest first. */
  async list(
    filter: { runtime_agent_id?: string; status?: string; review_state?: ReviewState },
    page: { limit: number; cursor?: string },
    caller: RecognitionCaller,
  ) {
    let callerHashed: string | undefined;
    if (!isAdmin(caller)) {
      const token = sentCallerToken(caller.public.headers);
      if (!token) return { items: [], next_cursor: null, limit: page.limit };
      callerHashed = callerHash(token);
    }
    return this.store.page(
      {
        ...(callerHashed && { callerHash: callerHashed }),
        ...(filter.runtime_agent_id && { runtimeAgentId: filter.runtime_agent_id }),
        ...(filter.status && { status: filter.status }),
        ...(filter.review_state && { reviewState: filter.review_state }),
      },
      page,
      (row) => this.presentListed(row),
    );
  }

  async get(runId: string, caller: RecognitionCaller) {
    return this.present(await this.require(runId, caller), caller);
  }

  /**
   * `PATCH .../field-reviews/{field_id}`: applies the change under the field's row lock, so concurrent reviewers take
   * turns and none is lost; an effective change appends one revision with the new current state, in one transaction.
   */
  async review(runId: string, fieldId: string, change: ReviewChange, caller: RecognitionCaller) {
    await this.require(runId, caller);
    return this.store.transaction(async (transaction) => {
      const field = await this.store.lockField(runId, fieldId, transaction);
      if (!field) throw fieldMissing(runId, fieldId);
      const next = applyReview(field, change);
      if (!next) return { ...presentFieldReview(field), revision_appended: false, revision: null };
      // The identity a caller sends is a display snapshot; an administrator's id is added from the login, which is trusted.
      const identity = isAdmin(caller) ? { ...change.reviewer_identity, admin_user_id: caller.admin.admin_user_id } : (change.reviewer_identity ?? null);
      const appended = await this.store.appendRevision(field, { ...next, reviewer_identity: identity }, transaction);
      return { ...presentFieldReview(appended.field), revision_appended: true, revision: presentRevision(appended.revision) };
    });
  }

  async revisions(runId: string, fieldId: string, caller: RecognitionCaller) {
    const run = await this.require(runId, caller);
    const field = (await this.store.fields(runId)).find((f) => f.field_id === fieldId);
    if (!field) throw fieldMissing(runId, fieldId);
    return presentTimeline(run, field, await this.store.revisions(runId, fieldId));
  }

  /** The bytes of one of a run's files, for the same-origin proxy routes. */
  async file(runId: string, which: RecognitionFile, caller: RecognitionCaller) {
    const run = await this.require(runId, caller);
    const stem = run.source_filename.replace(/\.[^.]*$/, '') || 'document';
    const found =
      which === 'source-document'
        ? { key: run.source_object_key, filename: run.source_filename, contentType: run.source_content_type }
        : which === 'source-pdf'
          ? run.pdf_object_key && { key: run.pdf_object_key, filename: `${stem}.pdf`, contentType: 'application/pdf' }
          : (() => {
              const preview = run.preview_pages.find((p) => p.page_number === which.preview);
              return preview && { key: preview.object_key, filename: `${stem}.page-${preview.page_number}.png`, contentType: 'image/png' };
            })();
    if (!found)
      throw new NotFoundError(`run ${runId} has no ${typeof which === 'string' ? which : `preview of page ${which.preview}`} (yet)`, {
        code: 'DOCUMENT_RECOGNITION_FILE_NOT_FOUND',
      });
    const { body, info } = await this.deps.objectStore.open(found.key);
    return { body, size: info.size, filename: found.filename, contentType: found.contentType };
  }

  /** The stored extraction result (`/result`), read back as the JSON it is. */
  async result(runId: string, caller: RecognitionCaller): Promise<{ body: RecognitionResult; filename: string }> {
    const run = await this.require(runId, caller);
    if (!run.result_object_key) throw new NotFoundError(`run ${runId} has no result (yet)`, { code: 'DOCUMENT_RECOGNITION_FILE_NOT_FOUND' });
    const stored = await this.deps.objectStore.get(run.result_object_key);
    const stem = run.source_filename.replace(/\.[^.]*$/, '') || 'document';
    return { body: JSON.parse(new TextDecoder().decode(stored.data)) as RecognitionResult, filename: `${stem}.result.json` };
  }

  /** `GET /admin/document-recognition/overview`: runs by status and review state, and the runtime agents. */
  async overview() {
    const counts = await this.store.overview();
    const sum = (pick: (row: (typeof counts)[number]) => boolean) => counts.filter(pick).reduce((total, row) => total + row.runs, 0);
    const statuses = ['queued', 'running', 'recovering', 'succeeded', 'failed'];
    const states: ReviewState[] = ['not_started', 'in_progress', 'reviewed'];
    return {
      run_count: sum(() => true),
      by_status: Object.fromEntries(statuses.map((status) => [status, sum((row) => row.status === status)])),
      review_progress: Object.fromEntries(states.map((state) => [state, sum((row) => row.status === 'succeeded' && row.review_state === state)])),
      runtime_agent_count: (await this.deps.runtimeAgents.list(true)).items.length,
    };
  }

  /** Runs and their fields, for the import into an evaluation dataset. */
  async forImport(runIds: string[]): Promise<{ run: RecognitionRunRow; fields: FieldRow[] }[]> {
    const found = [];
    for (const id of runIds) {
      const run = await this.store.find(id);
      if (!run) throw new NotFoundError(`no document-recognition run ${id}`, { code: 'DOCUMENT_RECOGNITION_RUN_NOT_FOUND' });
      found.push({ run, fields: await this.store.fields(id) });
    }
    return found;
  }

  /** The run, when the caller may see it: any for administrators, a public caller's own (by caller token); else "not found". */
  private async require(runId: string, caller: RecognitionCaller): Promise<RecognitionRunRow> {
    const run = await this.store.find(runId);
    const token = isAdmin(caller) ? null : sentCallerToken(caller.public.headers);
    if (!run || (!isAdmin(caller) && (!token || run.public_caller_hash !== callerHash(token))))
      throw new NotFoundError(`no document-recognition run ${runId}${isAdmin(caller) ? '' : ' of yours'}`, { code: 'DOCUMENT_RECOGNITION_RUN_NOT_FOUND' });
    return run;
  }

  private base = (run: RecognitionRunRow, caller: RecognitionCaller) => `${isAdmin(caller) ? '/admin' : ''}/document-recognition/runs/${run.id}`;

  /** The projected list item: what a list shows without the fields, previews and outputs. */
  private presentListed(run: RecognitionRunRow) {
    return {
      run_id: run.id,
      runtime_agent_id: run.runtime_agent_id,
      runtime_agent_version_id: run.runtime_agent_version_id,
      runtime_agent_name: run.runtime_binding_snapshot.agent_name,
      status: run.status,
      review_state: reviewState(run),
      field_count: run.field_count,
      reviewed_field_count: run.reviewed_field_count,
      source_filename: run.source_filename,
      source_content_type: run.source_content_type,
      source_size_bytes: Number(run.source_size_bytes),
      page_count: run.page_count,
      error: run.error,
      created_at: run.created_at.toISOString(),
      completed_at: run.completed_at?.toISOString() ?? null,
    };
  }

  /** The run detail of spec 2.9; a public caller's view leaves out the definition's instructions and the model binding. */
  private async present(run: RecognitionRunRow, caller: RecognitionCaller) {
    const base = this.base(run, caller);
    const store = this.deps.objectStore;
    const [source, pdf, result, previews, fields] = await Promise.all([
      downloadTriple(store, run.source_object_key, `${base}/source-document`),
      downloadTriple(store, run.pdf_object_key, `${base}/source-pdf`),
      downloadTriple(store, run.result_object_key, `${base}/result`),
      Promise.all(run.preview_pages.map(async (p) => ({ p, download: await downloadTriple(store, p.object_key, `${base}/preview-pages/${p.page_number}`) }))),
      run.status === 'succeeded' ? this.store.fields(run.id) : Promise.resolve([]),
    ]);
    const snapshot = run.runtime_binding_snapshot;
    return {
      ...this.presentListed(run),
      runtime_agent_type_snapshot: run.runtime_agent_type_snapshot,
      runtime_binding_snapshot: isAdmin(caller)
        ? snapshot
        : {
            agent_name: snapshot.agent_name,
            upload_slot: snapshot.upload_slot,
            output_slot: snapshot.output_slot,
            runtime_key: snapshot.definition.runtime_key,
            recognizer_key: snapshot.recognizer_key,
          },
      source_sha256: run.source_sha256,
      source_document_url: source.url,
      source_document_download_mode: source.mode,
      source_document_download_warning: source.warning,
      source_pdf_url: pdf.url,
      source_pdf_download_mode: pdf.mode,
      source_pdf_download_warning: pdf.warning,
      pdf_rendition: run.pdf_rendition,
      preview_pages: previews.map(({ p, download }) => ({
        page_number: p.page_number,
        width: p.width,
        height: p.height,
        url: download.url,
        download_mode: download.mode,
        download_warning: download.warning,
      })),
      summary: run.summary,
      field_reviews: fields.map(presentFieldReview),
      issue_list: run.issue_list,
      workspace_output: run.workspace_output,
      result_download_url: result.url,
      result_download_mode: result.mode,
      result_download_warning: result.warning,
      result_size_bytes: run.result_size_bytes === null ? null : Number(run.result_size_bytes),
      history_status: run.history_recorded ? 'recorded' : 'unrecorded',
      generation_usage: run.generation_usage,
      estimated_cost: run.estimated_cost,
      attempt_count: run.attempt_count,
      worker_heartbeat_at: run.worker_heartbeat_at?.toISOString() ?? null,
      heartbeat_stale: run.heartbeat_stale ?? false,
      started_at: run.started_at?.toISOString() ?? null,
      ...(isAdmin(caller) && { trace_id: run.trace_id }),
    };
  }
}

const fieldMissing = (runId: string, fieldId: string) =>
  new NotFoundError(`run ${runId} has no field ${fieldId}`, { code: 'DOCUMENT_RECOGNITION_FIELD_NOT_FOUND' });
