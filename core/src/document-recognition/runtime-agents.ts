import { ConflictError, NotFoundError, ValidationError, fusionDefinitionSchema, type DocumentRecognizer, type FusionDefinition } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { Sequelize } from 'sequelize';
import { auditOperation, type Operation } from '../admin/operation.js';
import type { AgentView, Agents } from '../agents/agents.js';
import type { HostConfig } from '../config/schema.js';
import { acceptsType } from '../fusion/run-inputs.js';
import { jobModelBinding, type ModelBinding } from '../models/job-model.js';
import { runtimeSlots, type RuntimeSlots } from './field-set.js';
import { RuntimeAgentStore, type RuntimeAgentRow } from './runtime-agent-store.js';

/** A runtime agent resolved for a run: its published version's definition, model binding and slots. */
export interface ResolvedRuntimeAgent {
  agent: AgentView;
  versionId: string;
  definition: FusionDefinition;
  binding: ModelBinding;
  slots: RuntimeSlots;
}

export interface RuntimeAgentsDeps {
  db: Sequelize;
  config: HostConfig;
  agents: Agents;
  recognizers: KeyedRegistry<DocumentRecognizer>;
}

// Published versions never change: their definitions are kept once read.
const VERSION_CACHE_MAX = 500;

/**
 * Document-recognition runtime agents (spec 4.10): published Fusion agents whose definition takes a file and gives a
 * `document_field_set`, registered by administrators (audited). Runs bind the published version current when they
 * are made; an agent republished without a usable definition, deactivated or removed takes no new runs.
 */
export class RuntimeAgents {
  private readonly store: RuntimeAgentStore;
  private readonly versions = new Map<string, { definition: FusionDefinition; binding: ModelBinding; problems: string[]; slots?: RuntimeSlots }>();

  constructor(private readonly deps: RuntimeAgentsDeps) {
    this.store = new RuntimeAgentStore(deps.db);
    deps.agents.addTypeChangeCheck(async (agentId) =>
      (await this.store.find(agentId)) ? 'the agent is a document-recognition runtime agent; remove it there first' : undefined,
    );
  }

  /** `PUT /admin/document-recognition/runtime-agents/{agent_id}`: registers a published Fusion agent that fits. */
  async register(agentId: string, op: Operation) {
    const agent = await this.deps.agents.get(agentId);
    const resolved = await this.resolve(agent);
    const { row, created } = await this.store.transaction(async (transaction) => {
      const registered = await this.store.register(agent.agent_id, op.operator.admin_user_id, transaction);
      if (registered.created) {
        await auditOperation(
          this.deps.db,
          'core.document_recognition',
          op,
          {
            action: 'document_recognition.runtime_agent.register',
            target_type: 'agent',
            target_id: agent.agent_id,
            payload: { published_agent_version_id: resolved.versionId },
          },
          transaction,
        );
      }
      return registered;
    });
    return { ...(await this.present(row, true)), created };
  }

  /** `DELETE /admin/document-recognition/runtime-agents/{agent_id}`: takes no new runs; its runs stay readable and reviewable. */
  async remove(agentId: string, op: Operation): Promise<void> {
    await this.store.transaction(async (transaction) => {
      if (!(await this.store.remove(agentId, transaction)))
        throw new NotFoundError(`agent ${agentId} is not a registered runtime agent`, { code: 'RUNTIME_AGENT_NOT_FOUND' });
      await auditOperation(
        this.deps.db,
        'core.document_recognition',
        op,
        { action: 'document_recognition.runtime_agent.remove', target_type: 'agent', target_id: agentId },
        transaction,
      );
    });
  }

  async list(admin: boolean) {
    const rows = await this.store.list();
    const items = await Promise.all(rows.map((row) => this.present(row, admin)));
    return { items: admin ? items : items.filter((item) => item.available) };
  }

  /** One runtime agent; the public view of one that takes no runs now is "not found". */
  async get(runtimeAgentId: string, admin: boolean) {
    const row = await this.store.find(runtimeAgentId);
    const presented = row && (await this.present(row, admin));
    if (!presented || (!admin && !presented.available))
      throw new NotFoundError(`no runtime agent ${runtimeAgentId} takes runs`, { code: 'RUNTIME_AGENT_NOT_FOUND' });
    return presented;
  }

  /** The runtime agent a new run binds: registered, active, published with a usable definition (else 404 or 409 saying why). */
  async forRun(runtimeAgentId: string): Promise<ResolvedRuntimeAgent> {
    const row = await this.store.find(runtimeAgentId);
    const agent = row && (await this.deps.agents.get(row.agent_id).catch(() => undefined));
    if (!row || !agent) throw new NotFoundError(`no runtime agent ${runtimeAgentId} is registered`, { code: 'RUNTIME_AGENT_NOT_FOUND' });
    if (agent.status !== 'active')
      throw new ConflictError(`runtime agent ${runtimeAgentId} is ${agent.status}; it takes no runs`, { code: 'RUNTIME_AGENT_UNAVAILABLE' });
    try {
      return await this.resolve(agent);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      throw new ConflictError(
        `the published version of runtime agent ${runtimeAgentId} no longer fits document recognition: ${error.issues.map((i) => i.msg).join('; ')}`,
        { code: 'RUNTIME_AGENT_UNAVAILABLE' },
      );
    }
  }

  /** The upload slot as a caller should fill it: the types both the slot and the recognizer take, and the size limit. */
  uploadPolicy(slots: RuntimeSlots) {
    const recognizer = this.deps.recognizers.get(this.deps.config.document_recognition.recognizer_key);
    const offered = recognizer?.contentTypes ?? [];
    const slotTypes = slots.upload.accepted_content_types;
    const accepted = slotTypes.length === 0 ? [...offered] : offered.filter((type) => acceptsType(slotTypes, type));
    return {
      slot: slots.upload.name,
      accepted_content_types: accepted,
      max_size_bytes: Math.min(slots.upload.max_size_bytes ?? Infinity, this.deps.config.document_recognition.max_file_bytes),
    };
  }

  private async resolve(agent: AgentView): Promise<ResolvedRuntimeAgent> {
    if (agent.agent_type !== 'fusion')
      throw new ConflictError(`agent ${agent.agent_id} is a ${agent.agent_type} agent; runtime agents are fusion agents`, { code: 'AGENT_NOT_FUSION' });
    const versionId = agent.published_agent_version_id;
    if (!versionId) throw new ConflictError(`agent ${agent.agent_id} has not published a version; publish it first`, { code: 'RUNTIME_AGENT_NOT_PUBLISHED' });
    let cached = this.versions.get(versionId);
    if (!cached) {
      const snapshot = await this.deps.agents.versionSnapshot(agent.agent_id, versionId);
      if (!snapshot?.fusion_definition)
        throw new ConflictError(`the published version ${versionId} holds no fusion_definition`, { code: 'FUSION_DEFINITION_MISSING' });
      const definition = fusionDefinitionSchema.parse(snapshot.fusion_definition);
      const { slots, problems } = runtimeSlots(definition);
      cached = { definition, binding: jobModelBinding(snapshot, this.deps.config), problems, ...(slots && { slots }) };
      if (this.versions.size >= VERSION_CACHE_MAX) this.versions.delete(this.versions.keys().next().value!);
      this.versions.set(versionId, cached);
    }
    if (!cached.slots) {
      throw new ValidationError(
        cached.problems.map((msg) => ({ loc: ['published_version', 'fusion_definition'], msg, type: 'value_error' })),
        { code: 'RUNTIME_AGENT_UNSUITABLE' },
      );
    }
    return { agent, versionId, definition: cached.definition, binding: cached.binding, slots: cached.slots };
  }

  /** A registration as callers see it: the published version, upload-slot resolution and execution policy, or why it takes no runs. */
  private async present(row: RuntimeAgentRow, admin: boolean) {
    const { config } = this.deps;
    const agent = await this.deps.agents.get(row.agent_id).catch(() => undefined);
    let resolved: ResolvedRuntimeAgent | undefined;
    let unavailable: string | null = null;
    try {
      resolved = await this.forRun(row.agent_id);
    } catch (error) {
      unavailable = (error as Error).message;
    }
    const policy = config.document_recognition;
    return {
      runtime_agent_id: row.agent_id,
      agent_id: row.agent_id,
      name: agent?.name ?? null,
      description: agent?.description ?? null,
      available: resolved !== undefined,
      unavailable_reason: unavailable,
      published_agent_version_id: agent?.published_agent_version_id ?? null,
      upload_slot: resolved ? this.uploadPolicy(resolved.slots) : null,
      output_slot: resolved ? { slot: resolved.slots.output.name, fields: resolved.slots.fields } : null,
      execution_policy: {
        recognizer_key: policy.recognizer_key,
        runtime_key: resolved?.definition.runtime_key ?? null,
        max_pages: policy.max_pages,
        preview_pages: policy.preview_pages,
        max_attempts: policy.max_attempts,
        run_lease_seconds: policy.run_lease_seconds,
        default_wait_seconds: policy.wait_seconds,
        anonymous_runs_per_minute: policy.anonymous_runs_per_minute,
        ...(admin && { model_binding: resolved?.binding ?? null }),
      },
      registered_at: row.registered_at.toISOString(),
      ...(admin && { registered_by: row.registered_by }),
    };
  }
}
