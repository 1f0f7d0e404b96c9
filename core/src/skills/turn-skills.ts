import { randomUUID } from 'node:crypto';
import type { JsonSchema, Logger, ToolCallOutcome, ToolHandle } from '@agent-host/sdk';
import type { ToolCallBudget } from '../chat/tool-budget.js';
import { maskSensitive, redactSecrets, redactText } from '../mcp/pipeline/masking.js';
import { presentSkillCall, type SkillCallAudits, type SkillCallRecord } from './skill-call-audit-store.js';
import { executeSkill, ExecutionTrail, type ExecutionDeps } from './skill-execution.js';
import type { RunnableSkill } from './skill-mount-store.js';
import type { SkillMounts } from './skill-mounts.js';

/** Every skill takes the user's request; a backend maps it onto what it calls (for `mcp`, `query_argument`). */
const SKILL_INPUT: JsonSchema = {
  type: 'object',
  properties: { query: { type: 'string', description: 'What the user asked, in their words' } },
  required: ['query'],
};

export interface TurnSkillsDeps extends ExecutionDeps {
  mounts: Pick<SkillMounts, 'runnable'>;
  audits: SkillCallAudits;
}

/** The turn a skill handle serves. */
export interface SkillTurn {
  agentId: string | null;
  sessionId: string;
  turnId: string;
  traceId: string;
  /** Shared with the turn's MCP tool handle: `max_tool_calls_total_per_request`. */
  budget: ToolCallBudget;
  signal: AbortSignal;
  /** The turn's logger. */
  log: Logger;
}

/**
 * The skill handle of one turn (`TurnContext.skills`): the agent's active
 * mounts of active skills, highest priority first. Each call passes the
 * mount's `max_calls_per_turn` and the turn's tool budget (else `blocked`),
 * runs within `timeout_ms`, is audited with masked payloads and remembered
 * for the turn context (`skill_calls`, and `skill_context` for results).
 * A call never throws, so a failing skill never stops the reply.
 */
export class TurnSkills {
  private mounts?: Promise<RunnableSkill[]>;
  private readonly callCounts = new Map<string, number>();
  private readonly records: SkillCallRecord[] = [];
  private readonly results: { skill_name: string; skill_id: string; skill_version_id: string; version_number: number; result: unknown }[] = [];

  constructor(
    private readonly deps: TurnSkillsDeps,
    private readonly turn: SkillTurn,
  ) {
    // Read now, alongside the turn's other mount lookups, rather than one round trip after another.
    void this.load();
  }

  readonly handle: ToolHandle = {
    list: async () => (await this.load()).map((m) => ({ name: m.skill_name, description: m.skill_description, input_schema: SKILL_INPUT })),
    call: (name, args) => this.call(name, args),
  };

  /** `skill_context`: what the successful calls returned, as given to the runtime (masked for storage). */
  skillContext() {
    return this.results;
  }

  /** `skill_calls`: the turn's audit records. */
  calls() {
    return this.records.map(presentSkillCall);
  }

  private async call(name: string, input: Record<string, unknown>): Promise<ToolCallOutcome> {
    const mount = (await this.load()).find((m) => m.skill_name === name);
    if (!mount) return { status: 'error', result: null, error: `no active skill named "${name}" is mounted on this agent` };
    const started = Date.now();
    const trail = new ExecutionTrail(mount.tool_allowlist);
    const calls = this.callCounts.get(mount.id) ?? 0;
    if (calls >= mount.max_calls_per_turn)
      return this.finish(mount, input, started, trail, blocked(`max_calls_per_turn (${mount.max_calls_per_turn}) of this skill is reached in this turn`));
    if (!this.turn.budget.take())
      return this.finish(mount, input, started, trail, blocked(`max_tool_calls_total_per_request (${this.turn.budget.limit}) is reached in this request`));
    this.callCounts.set(mount.id, calls + 1);
    const outcome = await executeSkill(this.deps, mount, input, trail, this.turn.signal);
    return this.finish(mount, input, started, trail, trail.blockedReason ? blocked(trail.blockedReason) : outcome);
  }

  /** Audits the call and hands the runtime its outcome (a block reads as an `error` outcome). */
  private async finish(
    mount: RunnableSkill,
    input: Record<string, unknown>,
    started: number,
    trail: ExecutionTrail,
    outcome: ToolCallOutcome | Blocked,
  ): Promise<ToolCallOutcome> {
    const mask = (value: unknown) => maskSensitive(value ?? null, trail.secrets);
    const record: SkillCallRecord = {
      id: randomUUID(),
      session_id: this.turn.sessionId,
      turn_id: this.turn.turnId,
      agent_id: this.turn.agentId,
      mount_id: mount.id,
      skill_id: mount.skill_id,
      skill_version_id: mount.skill_version_id,
      skill_name: mount.skill_name,
      version_number: mount.version_number,
      backend_type: mount.backend_type,
      backend_ref_id: mount.backend_ref_id,
      tool_name: trail.lastTool,
      status: outcome.status,
      trace_id: this.turn.traceId,
      request_payload: mask({ input, tool_calls: trail.toolCalls }),
      response_payload: mask(outcome.result),
      error_message: outcome.error ? redactText(outcome.error, trail.secrets) : null,
      latency_ms: Date.now() - started,
      created_at: new Date(),
    };
    this.records.push(record);
    if (record.status === 'success') {
      this.results.push({
        skill_name: mount.skill_name,
        skill_id: mount.skill_id,
        skill_version_id: mount.skill_version_id,
        version_number: mount.version_number,
        result: record.response_payload,
      });
    }
    await this.deps.audits
      .insert(record)
      .catch((error: unknown) => this.turn.log.error({ err: error, skill_call_id: record.id }, 'skill call audit was not stored'));
    return outcome.status === 'blocked' ? { status: 'error', result: null, error: outcome.error } : (redactSecrets(outcome, trail.secrets) as ToolCallOutcome);
  }

  /** The runnable mounts, read once per turn; unreadable mounts mean no skills, never a failed reply. */
  private load(): Promise<RunnableSkill[]> {
    const { agentId } = this.turn;
    if (!agentId) return Promise.resolve([]);
    this.mounts ??= this.deps.mounts.runnable(agentId).catch((error: unknown) => {
      this.turn.log.warn({ err: error }, 'skill mounts could not be read; the turn goes on without skills');
      return [];
    });
    return this.mounts;
  }
}

type Blocked = { status: 'blocked'; result: null; error: string };
const blocked = (reason: string): Blocked => ({ status: 'blocked', result: null, error: reason });
