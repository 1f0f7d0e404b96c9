import {
  ConflictError,
  NotFoundError,
  TooManyRequestsError,
  ValidationError,
  fusionDefinitionSchema,
  type DocumentParser,
  type FusionDefinition,
  type FusionRuntime,
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
import { newTraceId } from '../observability/trace-id.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import type { PricingTable } from '../usage/cost.js';
import { PUBLIC_API_KEY_HEADER, type PublicApiKeys } from './api-keys.js';
import { checkSubmission, withStoredInputs, type RunSubmission } from './run-inputs.js';
import { FusionRunStore, type FusionRunRow, type PublicOwner, type StoredInput } from './run-store.js';
import { LeaseWorker } from '../jobs/lease-worker.js';
import { jobModelBinding, type ModelBinding } from '../models/job-model.js';
import { callerHash, callerTokenFor, sentCallerToken } from '../jobs/public-owner.js';
import { executeRun } from './execute-run.js';

const TERMINAL = new Set(['succeeded', 'failed']);
// Published versions never change: their definitions are kept once read.
const VERSION_CACHE_MAX = 500;

export interface FusionRunsDeps {
  db: Sequelize;
  config: HostConfig;
  agents: Agents;
  keys: PublicApiKeys;
  runtimes: KeyedRegistry<FusionRuntime>;
  providers: KeyedRegistry<ModelProvider>;
  parsers: KeyedRegistry<DocumentParser>;
  objectStore: StreamingObjectStore;
  pricing: PricingTable;
  instanceId: string;
  logger: Logger;
}

/** Who calls a public route: the headers the host reads and the client's address. */
export interface PublicRequest {
  headers: Record<string, string | string[] | undefined>;
  clientIp: string | null;
}

/** The resolved caller of a public route: the agent, its published version, and who owns the runs made. */
interface PublicAccess {
  agent: AgentView;
  versionId: string;
  definition: FusionDefinition;
  binding: ModelBinding;
  /** The key's id, or the anonymous caller's token (null: none sent yet). */
  apiKeyId: string | null;
  callerToken: string | null;
}

const header = (request: PublicRequest, name: string) => {
  const value = request.headers[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
};

/**
 * Fusion runs (spec 2.9, 4.11): made by administrators on the draft definition or a stored version, and by public
 * callers on the published version only; executed under a lease by a {@link LeaseWorker}; read with their inputs, outputs,
 * usage and (for administrators) the governance context. A public caller reads only the runs it made: under its API
 * key, or, anonymously, under the caller token its first run was given.
 */
export class FusionRuns {
  readonly worker: LeaseWorker<FusionRunRow, FusionRunRow>;
  private readonly store: FusionRunStore;
  private readonly anonymous: MinuteBudget;
  private readonly versions = new Map<string, { definition: FusionDefinition; binding: ModelBinding }>();

  constructor(private readonly deps: FusionRunsDeps) {
    const { config } = deps;
    this.store = new FusionRunStore(deps.db, config.fusion.run_lease_seconds);
    const store = this.store;
    this.worker = new LeaseWorker(
      {
        claim: (owner, leaseSeconds) => store.claim(owner, leaseSeconds),
        recover: (maxAttempts) => store.recover(maxAttempts),
        heartbeat: (id, token, leaseSeconds) => store.heartbeat(id, token, leaseSeconds),
        async attempt(run, signal) {
          const outcome = await executeRun(run, deps, signal);
          if (signal.aborted) return undefined;
          const ended = await store.finish(run.id, run.lease_token!, outcome);
          if (!ended) deps.logger.warn({ run_id: run.id }, 'a Fusion run ended after another worker took it over');
          return ended;
        },
      },
      {
        enabled: config.fusion.enabled,
        concurrency: config.fusion.runs_per_instance,
        leaseSeconds: config.fusion.run_lease_seconds,
        supervisorSeconds: config.fusion.supervisor_interval_seconds,
        maxAttempts: config.fusion.max_attempts,
        what: 'Fusion run',
        instanceId: deps.instanceId,
        logger: deps.logger,
      },
    );
    this.anonymous = new MinuteBudget(
      deps.db,
      'fusion-anonymous',
      config.fusion.anonymous_runs_per_minute,
      `${config.fusion.anonymous_runs_per_minute} Fusion runs a minute from one address ([fusion] anonymous_runs_per_minute)`,
    );
    deps.agents.addTypeChangeCheck(async (agentId, from) => {
      if (from !== 'fusion') return undefined;
      const open = await this.store.openCount(agentId);
      return open ? `${open} Fusion run(s) of the agent have not ended` : undefined;
    });
  }

  start(jobs: JobScheduler): Promise<void> {
    return this.worker.start(jobs);
  }

  stop(): Promise<void> {
    return this.worker.stop();
  }

  /** An administrator's run: the draft definition, or that of `agent_version_id` (any stored version of the agent). */
  async createAsAdmin(agentId: string, submission: RunSubmission & { agent_version_id?: string }, wait: number | undefined, op: Operation) {
    const agent = await this.fusionAgent(agentId);
    let definition: FusionDefinition;
    let binding: ModelBinding;
    if (submission.agent_version_id) {
      ({ definition, binding } = await this.version(agent.agent_id, submission.agent_version_id, 'body'));
    } else {
      if (!agent.fusion_definition)
        throw new ConflictError(`agent ${agentId} has no fusion_definition; set it with PATCH /agents/${agentId}`, { code: 'FUSION_DEFINITION_MISSING' });
      definition = fusionDefinitionSchema.parse(agent.fusion_definition);
      binding = jobModelBinding(agent, this.deps.config);
    }
    const run = await this.make(agent.agent_id, submission, definition, {
      agent_version_id: submission.agent_version_id ?? null,
      channel: 'admin',
      model_binding: binding,
      created_by: op.operator.admin_user_id,
      authenticated_agent_api_key_id: null,
      public_caller_hash: null,
    });
    return this.presentAdmin(await this.settle(run, wait));
  }

  async listAsAdmin(agentId: string, filter: { status?: string }, page: { limit: number; cursor?: string }) {
    await this.fusionAgent(agentId);
    const found = await this.store.page(agentId, filter, page);
    return { ...found, items: found.items.map((row) => this.presentAdmin(row)) };
  }

  async getAsAdmin(agentId: string, runId: string) {
    await this.deps.agents.get(agentId);
    return this.presentAdmin(await this.require(agentId, runId));
  }

  /** The bytes of a run's file input. */
  async inputFile(agentId: string, runId: string, inputId: string, request?: PublicRequest) {
    const run = request ? await this.requirePublic(agentId, runId, await this.publicAccess(agentId, request, false)) : await this.require(agentId, runId);
    const input = run.inputs.find((i) => i.input_id === inputId);
    if (input?.kind !== 'file') throw new NotFoundError(`run ${runId} has no file input ${inputId}`, { code: 'FUSION_INPUT_NOT_FOUND' });
    const { body, info } = await this.deps.objectStore.open(input.object_key);
    return { body, size: info.size, filename: input.filename, contentType: input.content_type };
  }

  /** `GET /public/agents/{agent_id}/fusion-runtime`: what a caller needs to call the published version, nothing more. */
  async runtimeMetadata(agentId: string, request: PublicRequest) {
    const access = await this.publicAccess(agentId, request, false);
    const { definition } = access;
    return {
      agent_id: access.agent.agent_id,
      name: access.agent.name,
      description: access.agent.description,
      public_access_mode: access.agent.public_access_mode,
      published_agent_version_id: access.versionId,
      input_slots: definition.input_slots,
      output_slots: definition.output_slots.map(({ output_instruction_fragment: _, ...slot }) => slot),
      max_file_bytes: this.deps.config.fusion.max_file_bytes,
    };
  }

  async createAsPublic(agentId: string, submission: RunSubmission & { agent_version_id?: string }, wait: number | undefined, request: PublicRequest) {
    const access = await this.publicAccess(agentId, request, true);
    if (submission.agent_version_id && submission.agent_version_id !== access.versionId) {
      throw new ConflictError(
        `agent_version_id ${submission.agent_version_id} is not the published version ${access.versionId}; public calls run only the published version`,
        {
          code: 'FUSION_VERSION_NOT_CURRENT',
        },
      );
    }
    const callerToken = access.apiKeyId ? null : callerTokenFor(access.callerToken);
    const run = await this.make(access.agent.agent_id, submission, access.definition, {
      agent_version_id: access.versionId,
      channel: 'public',
      model_binding: access.binding,
      created_by: null,
      authenticated_agent_api_key_id: access.apiKeyId,
      public_caller_hash: callerToken && callerHash(callerToken),
    });
    return { ...this.presentPublic(await this.settle(run, wait)), caller_token: callerToken };
  }

  async listAsPublic(agentId: string, page: { limit: number; cursor?: string }, request: PublicRequest) {
    const access = await this.publicAccess(agentId, request, false);
    const owner = ownerOf(access);
    if (!owner) return { items: [], next_cursor: null, limit: page.limit };
    const found = await this.store.page(agentId, { owner, versionId: access.versionId }, page);
    return { ...found, items: found.items.map((row) => this.presentPublic(row)) };
  }

  async getAsPublic(agentId: string, runId: string, request: PublicRequest) {
    const access = await this.publicAccess(agentId, request, false);
    return this.presentPublic(await this.requirePublic(agentId, runId, access));
  }

  private async make(
    agentId: string,
    submission: RunSubmission,
    definition: FusionDefinition,
    fields: Omit<NewRunFields, 'inputs' | 'definition' | 'agent_id' | 'trace_id'>,
  ) {
    checkSubmission(definition, submission, this.deps.config.fusion.max_file_bytes);
    return withStoredInputs(this.deps.objectStore, agentId, definition, submission, async (inputs: StoredInput[]) => {
      const claim = this.worker.claimFor();
      const run = await this.store.insert({ ...fields, agent_id: agentId, definition, inputs, trace_id: newTraceId() }, claim);
      if (claim) void this.worker.begin(run);
      else await this.worker.kick();
      return run;
    });
  }

  /** Waits up to `wait` seconds (default and ceiling `[fusion] wait_seconds`) for the run to end, then reads it. */
  private settle(run: FusionRunRow, wait: number | undefined): Promise<FusionRunRow> {
    const seconds = Math.min(wait ?? this.deps.config.fusion.wait_seconds, this.deps.config.fusion.wait_seconds);
    return this.worker.settle(
      run,
      seconds * 1000,
      (row) => TERMINAL.has(row.status),
      () => this.store.find(run.agent_id, run.id),
    );
  }

  private async fusionAgent(agentId: string): Promise<AgentView> {
    const agent = await this.deps.agents.get(agentId);
    if (agent.agent_type !== 'fusion')
      throw new ConflictError(`agent ${agentId} is a ${agent.agent_type} agent; Fusion runs are for fusion agents`, { code: 'AGENT_NOT_FUSION' });
    return agent;
  }

  private async version(agentId: string, versionId: string, where: 'body' | 'published') {
    const cached = this.versions.get(versionId);
    if (cached) return cached;
    const snapshot = await this.deps.agents.versionSnapshot(agentId, versionId);
    if (!snapshot) {
      if (where === 'published') throw new Error(`published version ${versionId} of agent ${agentId} is missing`);
      throw new ValidationError([{ loc: ['body', 'agent_version_id'], msg: `agent ${agentId} has no version ${versionId}`, type: 'value_error' }]);
    }
    if (snapshot.agent_type !== 'fusion' || !snapshot.fusion_definition) {
      throw new ConflictError(`version ${versionId} holds no fusion_definition`, { code: 'FUSION_DEFINITION_MISSING' });
    }
    const resolved = { definition: fusionDefinitionSchema.parse(snapshot.fusion_definition), binding: jobModelBinding(snapshot, this.deps.config) };
    if (this.versions.size >= VERSION_CACHE_MAX) this.versions.delete(this.versions.keys().next().value!);
    this.versions.set(versionId, resolved);
    return resolved;
  }

  /**
   * Who may use the public routes of `agentId` (spec 4.11, 5.7): an active fusion agent that is not `admin_only`
   * (else 404, as for an agent that does not exist), with a published version (else 409); with `public_api_key`,
   * a live key of the agent (else 401); anonymous callers making a run spend their address's minute budget.
   */
  private async publicAccess(agentId: string, request: PublicRequest, creating: boolean): Promise<PublicAccess> {
    const agent = await this.deps.agents.get(agentId).catch(() => undefined);
    if (agent?.agent_type !== 'fusion' || agent.status !== 'active' || agent.public_access_mode === 'admin_only')
      throw new NotFoundError(`no public Fusion agent ${agentId}`, { code: 'AGENT_NOT_FOUND' });
    if (!agent.published_agent_version_id) {
      throw new ConflictError(`agent ${agentId} has not published a version yet`, { code: 'FUSION_NOT_PUBLISHED' });
    }
    let apiKeyId: string | null = null;
    let callerToken: string | null = null;
    if (agent.public_access_mode === 'public_api_key') {
      apiKeyId = await this.deps.keys.authenticate(agentId, header(request, PUBLIC_API_KEY_HEADER));
    } else {
      callerToken = sentCallerToken(request.headers);
      const refusal = creating && request.clientIp ? await this.anonymous.take(request.clientIp) : undefined;
      if (refusal) throw new TooManyRequestsError(refusal.detail, refusal.retryAfterSeconds);
    }
    const { definition, binding } = await this.version(agentId, agent.published_agent_version_id, 'published');
    return { agent, versionId: agent.published_agent_version_id, definition, binding, apiKeyId, callerToken };
  }

  private async require(agentId: string, runId: string): Promise<FusionRunRow> {
    const run = await this.store.find(agentId, runId);
    if (!run) throw new NotFoundError(`agent ${agentId} has no Fusion run ${runId}`, { code: 'FUSION_RUN_NOT_FOUND' });
    return run;
  }

  /** A run the public caller may read: its own, of the published version; any other is "not found". */
  private async requirePublic(agentId: string, runId: string, access: PublicAccess): Promise<FusionRunRow> {
    const run = await this.store.find(agentId, runId);
    const owner = ownerOf(access);
    const owns =
      run !== undefined &&
      owner !== undefined &&
      run.agent_version_id === access.versionId &&
      ('api_key_id' in owner ? run.authenticated_agent_api_key_id === owner.api_key_id : run.public_caller_hash === owner.caller_hash);
    if (!owns) throw new NotFoundError(`you have no Fusion run ${runId} of the published version`, { code: 'FUSION_RUN_NOT_FOUND' });
    return run!;
  }

  private presentAdmin(row: FusionRunRow) {
    const base = this.presentPublic(row, `/agents/${row.agent_id}/fusion-runs/${row.id}`);
    const template = this.deps.config.observability.trace_url_template;
    const traceUrl = template ? template.replaceAll('{trace_id}', row.trace_id) : null;
    return {
      ...base,
      channel: row.channel,
      created_by: row.created_by,
      authenticated_agent_api_key_id: row.authenticated_agent_api_key_id,
      attempt_count: row.attempt_count,
      lease_token: row.lease_token,
      last_attempt_started_at: row.last_attempt_started_at?.toISOString() ?? null,
      worker_heartbeat_at: row.worker_heartbeat_at?.toISOString() ?? null,
      heartbeat_stale: row.heartbeat_stale ?? false,
      trace_id: row.trace_id,
      trace_url: traceUrl,
      // Runs that never reached a model (queued, lost) or were stored before the context existed get it filled back.
      governance_context: row.governance_context ?? {
        agent_version_id: row.agent_version_id,
        definition_source: row.agent_version_id ? 'published_version' : 'draft',
        runtime_key: row.definition.runtime_key,
        model_binding: row.model_binding,
        prompt_messages: null,
        model_raw_response: null,
        attempts: [],
        trace_id: row.trace_id,
        trace_url: traceUrl,
        usage: row.generation_usage,
        filled_back: true,
      },
    };
  }

  /** The run as a public caller sees it: no governance context, trace, prompt or raw model answer. */
  private presentPublic(row: FusionRunRow, base = `/public/agents/${row.agent_id}/fusion-runs/${row.id}`) {
    return {
      run_id: row.id,
      agent_id: row.agent_id,
      agent_version_id: row.agent_version_id,
      status: row.status,
      inputs: row.inputs.map((input) =>
        input.kind === 'text'
          ? { input_id: input.input_id, slot: input.slot, kind: input.kind, text: input.text }
          : {
              input_id: input.input_id,
              slot: input.slot,
              kind: input.kind,
              filename: input.filename,
              content_type: input.content_type,
              size_bytes: input.size_bytes,
              sha256: input.sha256,
              download_url: `${base}/inputs/${input.input_id}/download`,
            },
      ),
      output_item_list: row.output_item_list,
      error: row.error,
      generation_usage: row.generation_usage,
      estimated_cost: row.estimated_cost,
      created_at: row.created_at.toISOString(),
      started_at: row.started_at?.toISOString() ?? null,
      completed_at: row.completed_at?.toISOString() ?? null,
    };
  }
}

type NewRunFields = Parameters<FusionRunStore['insert']>[0];

function ownerOf(access: PublicAccess): PublicOwner | undefined {
  if (access.apiKeyId) return { api_key_id: access.apiKeyId };
  return access.callerToken ? { caller_hash: callerHash(access.callerToken) } : undefined;
}
