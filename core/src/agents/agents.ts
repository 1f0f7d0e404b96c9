import { createHash, randomUUID } from 'node:crypto';
import {
  ConflictError,
  NotFoundError,
  ValidationError,
  type FusionDefinition,
  type FusionRuntime,
  type Orchestrator,
  type ValidationIssue,
} from '@agent-host/sdk';
import type { Sequelize, Transaction } from 'sequelize';
import type { AdminAuth } from '../admin/admin-auth.js';
import type { Operation } from '../admin/operation.js';
import type { SystemSettings } from '../admin/system-settings.js';
import type { HostConfig } from '../config/schema.js';
import { runtimeConfigCache, type RuntimeConfigCache } from '../db/runtime-config-cache.js';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { CHAT_ONLY_FIELDS, SNAPSHOT_FIELDS, USAGE_LIMIT_FIELDS, type AgentCreateInput, type AgentUpdateInput } from './agent-schema.js';
import { definitionProblems } from '../fusion/definition-check.js';
import { AgentStore, type AgentFields, type AgentRow, type AgentVersionRow } from './agent-store.js';

/**
 * Refuses an `agent_type` change while incompatible work runs; later
 * domains (evaluation, ETL, recognition, Fusion) register their checks.
 * Resolves with a reason to refuse, or `undefined`.
 */
export type AgentTypeChangeCheck = (agentId: string, from: string, to: string) => Promise<string | undefined>;

/** Agent types whose runtime executes the published snapshot: Fusion (spec 4.7 "publish fusion snapshot", 9.2). */
const PUBLISHABLE_TYPES = new Set(['fusion']);

/** Read-only `judge_prompt_version`: `default` for the built-in prompt, else a hash of the stored text. */
export function judgePromptVersion(judgePrompt: string | null): string {
  const text = judgePrompt?.trim() ?? '';
  return text === '' ? 'default' : `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 16)}`;
}

/** Agents and their versions (spec 2.4, 4.7, 9.1). Every write commits with its audit record. */
export class Agents {
  private readonly typeChangeChecks: AgentTypeChangeCheck[] = [];
  private readonly store: AgentStore;
  private readonly cache: RuntimeConfigCache;

  constructor(
    db: Sequelize,
    private readonly config: HostConfig,
    private readonly settings: SystemSettings,
    private readonly orchestrators: KeyedRegistry<Orchestrator>,
    private readonly fusionRuntimes: KeyedRegistry<FusionRuntime>,
    private readonly auth: AdminAuth,
  ) {
    this.store = new AgentStore(db);
    this.cache = runtimeConfigCache(db);
  }

  /** Lets a domain refuse `agent_type` changes while its jobs run. */
  addTypeChangeCheck(check: AgentTypeChangeCheck): void {
    this.typeChangeChecks.push(check);
  }

  async list(options: { limit: number; cursor?: string }) {
    const rows = await this.store.page(options.cursor ?? null, options.limit);
    const page = rows.slice(0, options.limit);
    return { items: page.map(present), next_cursor: rows.length > options.limit ? page.at(-1)!.id : null, limit: options.limit };
  }

  async get(id: string) {
    return present(await this.find(id));
  }

  /**
   * The agent as a turn runs it: {@link get} through the runtime config cache, so a turn of a known agent costs no
   * round trip; a change to the agent, from any instance, drops it (`db/runtime-config-cache.ts`).
   */
  runtime(id: string): Promise<AgentView> {
    return this.cache.read(`agent:${id}`, () => this.get(id));
  }

  /** `GET /public/agents`: active, anonymous-public agents, with no prompt or governance fields. */
  async listPublic() {
    const rows = await this.store.publicAgents();
    return { items: rows.map((r) => ({ agent_id: r.id, name: r.name, description: r.description, agent_type: r.agent_type })) };
  }

  async create(input: AgentCreateInput, op: Operation) {
    const fields = await this.validate(defaults(), input);
    const id = randomUUID();
    await this.store.transaction(async (transaction) => {
      await this.store.insert(id, fields, op.operator.admin_user_id, transaction);
      await this.audit(op, 'agent.create', id, { name: fields.name, agent_type: fields.agent_type }, transaction);
    });
    return this.get(id);
  }

  async update(id: string, input: AgentUpdateInput, op: Operation) {
    const fields = await this.validateChange(id, await this.find(id), input);
    await this.store.transaction(async (transaction) => {
      await this.store.update(id, fields, SNAPSHOT_FIELDS, transaction);
      await this.audit(op, 'agent.update', id, { changed: Object.keys(input) }, transaction);
    });
    return this.get(id);
  }

  async delete(id: string, op: Operation): Promise<void> {
    await this.find(id);
    await this.store.transaction(async (transaction) => {
      await this.store.delete(id, transaction);
      await this.audit(op, 'agent.delete', id, {}, transaction);
    });
  }

  /** The configuration frozen in version `versionId` of agent `id` (a published Fusion version), if it has that version. */
  versionSnapshot(id: string, versionId: string) {
    return this.store.versionSnapshot(id, versionId);
  }

  async listVersions(id: string) {
    await this.find(id);
    return { items: (await this.store.versions(id)).map(presentVersion) };
  }

  /** Stores the live configuration as an immutable snapshot. */
  async snapshot(id: string, note: string | null, op: Operation) {
    const version = await this.store.transaction(async (transaction) => {
      const created = await this.storeSnapshot(id, 'manual', note, op, transaction);
      await this.audit(op, 'agent.version.create', id, { version_id: created.id, version_number: created.version_number }, transaction);
      return created;
    });
    return presentVersion(version);
  }

  /** Snapshots the current configuration first, then restores `versionId`. */
  async rollback(id: string, versionId: string, op: Operation) {
    const snapshot = await this.store.versionSnapshot(id, versionId);
    if (!snapshot) throw new NotFoundError(`version ${versionId} of agent ${id} not found`, { code: 'AGENT_VERSION_NOT_FOUND' });
    const restored = { ...snapshot };
    if (restored.agent_type === 'chat' && !restored.orchestrator_key) restored.orchestrator_key = this.config.agent.default_orchestrator_key;
    // A snapshot may predate today's rules (a lower prompt limit, a removed orchestrator): it passes the checks of a PATCH.
    const fields = await this.validateChange(id, await this.find(id), restored);
    await this.store.transaction(async (transaction) => {
      const backup = await this.storeSnapshot(id, 'rollback_backup', `before rollback to ${versionId}`, op, transaction);
      await this.store.update(id, fields, SNAPSHOT_FIELDS, transaction);
      await this.audit(op, 'agent.rollback', id, { version_id: versionId, backup_version_id: backup.id }, transaction);
    });
    return this.get(id);
  }

  /**
   * Freezes the live configuration as the version runtimes execute by default (`published_agent_version_id`).
   * Only Fusion agents run a published snapshot (spec 4.7, 9.2); chat turns run the live agent, so publishing any
   * other type is refused rather than recorded without effect.
   */
  async publish(id: string, op: Operation) {
    const { agent_type: type, fusion_definition: definition } = await this.find(id);
    if (!PUBLISHABLE_TYPES.has(type)) {
      throw new ConflictError(
        `a ${type} agent cannot be published: nothing runs a published ${type} snapshot (${type === 'chat' ? 'chat turns run the live agent' : 'its runs use the live agent'}); publish is for ${[...PUBLISHABLE_TYPES].join(', ')} agents`,
        { code: 'AGENT_NOT_PUBLISHABLE' },
      );
    }
    if (!definition) {
      throw new ConflictError(`agent ${id} has no fusion_definition to publish; set it (PATCH /agents/${id}) first`, { code: 'AGENT_NOT_PUBLISHABLE' });
    }
    await this.store.transaction(async (transaction) => {
      const version = await this.storeSnapshot(id, 'publish', null, op, transaction);
      await this.store.setPublished(id, version.id, transaction);
      await this.audit(op, 'agent.publish', id, { version_id: version.id, version_number: version.version_number }, transaction);
    });
    return this.get(id);
  }

  private async storeSnapshot(id: string, reason: string, note: string | null, op: Operation, transaction: Transaction) {
    const row = await this.store.find(id, transaction);
    if (!row) throw new NotFoundError(`agent ${id} not found`, { code: 'AGENT_NOT_FOUND' });
    const live = present(row);
    const snapshot = Object.fromEntries(SNAPSHOT_FIELDS.map((f) => [f, live[f]]));
    return this.store.insertVersion(id, { reason, note, snapshot, createdBy: op.operator.admin_user_id }, transaction);
  }

  /** {@link validate}, then the registered checks when `agent_type` changes (409 while incompatible work runs). */
  private async validateChange(id: string, current: AgentFields, input: AgentUpdateInput): Promise<AgentFields> {
    const fields = await this.validate(current, input);
    if (fields.agent_type !== current.agent_type) {
      for (const check of this.typeChangeChecks) {
        const reason = await check(id, current.agent_type, fields.agent_type);
        if (reason)
          throw new ConflictError(`agent_type cannot change from ${current.agent_type} to ${fields.agent_type}: ${reason}`, {
            code: 'AGENT_TYPE_CHANGE_REFUSED',
          });
      }
    }
    return fields;
  }

  /**
   * The rules of spec 2.4 on the submitted fields, then the resulting agent:
   * chat-only fields are refused on other types and cleared when a chat
   * agent changes type; chat agents get the default orchestrator.
   */
  private async validate(current: AgentFields, input: AgentUpdateInput): Promise<AgentFields> {
    const next = { ...current, ...input } as AgentFields;
    const issues: ValidationIssue[] = [];
    const refuse = (field: string, msg: string) => issues.push({ loc: ['body', field], msg, type: 'value_error' });
    if (next.agent_type !== 'chat') {
      for (const field of CHAT_ONLY_FIELDS) if (input[field] !== undefined && input[field] !== null) refuse(field, `only chat agents take ${field}`);
      if (input.human_takeover_enabled) refuse('human_takeover_enabled', 'human takeover is for chat agents only');
      if (input.hide_rag_source_filename) refuse('hide_rag_source_filename', 'hide_rag_source_filename is for chat agents only');
      for (const field of CHAT_ONLY_FIELDS) (next as Record<string, unknown>)[field] = null;
      next.human_takeover_enabled = false;
      next.hide_rag_source_filename = false;
    } else {
      next.orchestrator_key ??= this.config.agent.default_orchestrator_key;
      if (!this.orchestrators.has(next.orchestrator_key)) {
        const known = this.orchestrators
          .list()
          .map((o) => o.key)
          .join(', ');
        refuse('orchestrator_key', `unknown orchestrator_key "${next.orchestrator_key}"; registered: ${known}`);
      }
    }
    if (next.agent_type !== 'fusion') {
      if (input.fusion_definition != null) refuse('fusion_definition', 'only fusion agents take fusion_definition');
      next.fusion_definition = null;
    } else if (input.fusion_definition) {
      for (const [path, msg] of definitionProblems(input.fusion_definition as FusionDefinition, this.fusionRuntimes)) {
        issues.push({ loc: ['body', 'fusion_definition', ...path], msg, type: 'value_error' });
      }
    }
    for (const [field, issue] of this.outOfCatalog(next, input)) refuse(field, issue);
    const grounding = next.response_grounding_config as { enabled?: boolean; low_confidence_behavior?: string } | null;
    if (
      grounding?.enabled &&
      next.agent_type === 'chat' &&
      next.orchestrator_key &&
      this.orchestrators.has(next.orchestrator_key) &&
      this.orchestrators.get(next.orchestrator_key)?.grounding !== true
    ) {
      refuse('response_grounding_config', `the chat runtime "${next.orchestrator_key}" does not apply grounding policies`);
    }
    if (grounding?.enabled && grounding.low_confidence_behavior === 'handoff' && !next.human_takeover_enabled) {
      // A handoff promises that a person follows up; without takeover nobody can.
      refuse('response_grounding_config', 'low_confidence_behavior "handoff" needs human_takeover_enabled: true');
    }
    if (next.public_access_mode === 'public_api_key' && next.agent_type !== 'fusion') {
      refuse('public_access_mode', 'public_api_key is for fusion agents only');
    }
    const limits: [keyof AgentFields, 'agent.system_prompt_max_length' | 'agent.judge_prompt_max_length'][] = [
      ['system_prompt', 'agent.system_prompt_max_length'],
      ['judge_prompt', 'agent.judge_prompt_max_length'],
    ];
    for (const [field, setting] of limits) {
      const value = next[field];
      if (typeof value !== 'string') continue;
      const max = await this.settings.value<number>(setting);
      if (value.length > max) refuse(field, `${field} is ${value.length} characters; the limit is ${max}`);
    }
    if (issues.length) throw new ValidationError(issues);
    return next;
  }

  /**
   * Models the submitted fields name that the catalog lacks: only catalog models are priced, and an unpriced model
   * would never trip a cost cap. The agent's primary pair is completed from the global default, as turns do.
   */
  private outOfCatalog(next: AgentFields, input: AgentUpdateInput): [string, string][] {
    const { catalog, default_model_name, default_model_provider } = this.config.models;
    const missing = (name: string, provider: string) =>
      !(name === default_model_name && provider === default_model_provider) && !catalog.some((m) => m.model_name === name && m.model_provider === provider);
    const issues: [string, string][] = [];
    const named = (v: unknown) => (typeof v === 'string' ? v : null);
    if (input.model_name != null || input.model_provider != null) {
      const name = named(next.model_name) ?? default_model_name;
      const provider = named(next.model_provider) ?? default_model_provider;
      if (missing(name, provider))
        issues.push([
          input.model_name != null ? 'model_name' : 'model_provider',
          `model "${name}" of model_provider "${provider}" is not in the model catalog; GET /models lists the models`,
        ]);
    }
    const routing = input.model_routing_config as Record<string, unknown> | null | undefined;
    for (const [slot, value] of Object.entries(routing ?? {})) {
      const model = value as { model_name?: unknown; model_provider?: unknown } | null;
      if (typeof model?.model_name !== 'string' || typeof model.model_provider !== 'string') continue;
      if (missing(model.model_name, model.model_provider))
        issues.push(['model_routing_config', `${slot}: model "${model.model_name}" of model_provider "${model.model_provider}" is not in the model catalog`]);
    }
    return issues;
  }

  private async find(id: string): Promise<AgentRow> {
    const row = await this.store.find(id);
    if (!row) throw new NotFoundError(`agent ${id} not found`, { code: 'AGENT_NOT_FOUND' });
    return row;
  }

  private audit(op: Operation, action: string, agentId: string, payload: Record<string, unknown>, transaction: Transaction): Promise<void> {
    return this.auth.audit(
      { action, outcome: 'success', actor_id: op.operator.admin_user_id, target_type: 'agent', target_id: agentId, payload },
      op.origin,
      transaction,
    );
  }
}

function defaults(): AgentFields {
  return {
    ...(Object.fromEntries(SNAPSHOT_FIELDS.map((f) => [f, null])) as unknown as AgentFields),
    description: '',
    status: 'active',
    public_access_mode: 'admin_only',
    human_takeover_enabled: false,
    hide_rag_source_filename: false,
    multitask_strategy: 'enqueue',
  };
}

/** An agent as the API shows it. */
export type AgentView = ReturnType<typeof present>;

/** The agent as the API shows it: numbers as numbers, plus the derived `judge_prompt_version`. */
function present(row: AgentRow) {
  // BIGINT and DECIMAL columns arrive as strings.
  const numbers = Object.fromEntries(USAGE_LIMIT_FIELDS.map((f) => [f, row[f] === null || row[f] === undefined ? null : Number(row[f])])) as Pick<
    AgentFields,
    (typeof USAGE_LIMIT_FIELDS)[number]
  >;
  return {
    agent_id: row.id,
    ...(Object.fromEntries(SNAPSHOT_FIELDS.map((f) => [f, row[f]])) as AgentFields),
    ...numbers,
    judge_prompt_version: judgePromptVersion(row.judge_prompt),
    published_agent_version_id: row.published_agent_version_id,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

function presentVersion(v: AgentVersionRow) {
  return {
    version_id: v.id,
    version_number: v.version_number,
    reason: v.reason,
    note: v.note,
    snapshot: v.snapshot,
    created_by: v.created_by,
    created_at: v.created_at.toISOString(),
  };
}
