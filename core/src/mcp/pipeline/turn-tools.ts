import type { ToolCallOutcome, ToolDescriptor, TurnResult, TurnToolHandle } from '@agent-host/sdk';
import { readResponseConfig, readRuntimeConfig, type McpResponseConfig } from '../admin/agent-config.js';
import { pendingApprovalReply } from './approvals.js';
import type { McpCallRecord, McpCallStatus, McpCallView } from './call-audit-store.js';
import { redactSecrets } from './masking.js';
import { businessPayload, failurePayload, resultForContext } from './payloads.js';
import { runToolPipeline } from './pipeline.js';
import { missingRequired } from './policy.js';
import { runQuickMatch } from './quick-match.js';
import { baseObservation } from './response-rules.js';
import type { Execution, ToolTurn, TurnToolsDeps, TurnToolsInput } from './tool-turn.js';
import { discoverTools, findTool, type MountedTool, type Toolset, type UsableMount } from './toolset.js';
import { isTrackingTool, projectTrackingResult, TRACKING_ARGUMENT } from '../tracking/tracking.js';

/**
 * The tool path of one turn: discovery (once), the executions with their
 * limits, the audits, `mcp_context`, the `mcp_*` observation, and the handle
 * the runtime gets (`list`, `call`, `runPipeline`).
 */
export class TurnTools implements ToolTurn {
  readonly calls: McpCallView[] = [];
  readonly context: Record<string, unknown>[] = [];
  readonly observation = baseObservation();
  readonly responseConfig: McpResponseConfig;
  /** Recent user messages in the window, oldest first; assistant messages never count. */
  readonly userHistory: string[];
  /** `mcp_runtime_config` prompt guidance (core_chat_v1 only). */
  readonly guidance: { selection: string | undefined; arguments: string | undefined };
  round = 0;
  private toolsetPromise?: Promise<Toolset>;
  private readonly usableMounts: Promise<UsableMount[]>;
  private readonly perMount = new Map<string, number>();

  readonly handle: TurnToolHandle = {
    list: async (): Promise<ToolDescriptor[]> => (await this.toolset()).tools.map((t) => t.descriptor),
    call: (name, args) => this.callByRuntime(name, args),
    runPipeline: () => runToolPipeline(this),
  };

  constructor(
    readonly deps: TurnToolsDeps,
    readonly input: TurnToolsInput,
  ) {
    this.responseConfig = readResponseConfig(input.agent?.mcp_response_config);
    const runtime = readRuntimeConfig(input.agent?.mcp_runtime_config);
    const window = runtime.history_user_message_window ?? deps.config.history_user_message_window;
    const users = input.history.filter((m) => m.role === 'user').map((m) => m.content);
    this.userHistory = window > 0 ? users.slice(-window) : [];
    this.guidance = { selection: runtime.tool_selection_prompt_guidance, arguments: runtime.tool_argument_prompt_guidance };
    // Read now, alongside the turn's other mount lookups; discovery awaits it (and sees its failure).
    this.usableMounts = input.agent ? deps.usableMounts(input.agent.agent_id) : Promise.resolve([]);
    this.usableMounts.catch(() => undefined);
  }

  /** The quick-match short circuit: a matching prefix command answers without runtime or model; else `null`. */
  quickMatch(): Promise<TurnResult | null> {
    return runQuickMatch(this);
  }

  /** The tools of the agent's active mounts, discovered once per turn. */
  toolset(): Promise<Toolset> {
    const agent = this.input.agent;
    if (!agent) return Promise.resolve({ mounts: [], tools: [] });
    this.toolsetPromise ??= discoverTools(this.deps, this.usableMounts, this.input.message, this.responseConfig.intent_gate_rules, this.input.signal).then(
      (toolset) => {
        if (toolset.mounts.length) this.context.push({ stage: 'tool-discovery', mounts: toolset.mounts });
        return toolset;
      },
    );
    return this.toolsetPromise;
  }

  /** Writes one audit row (masked) and keeps it for the turn's `mcp_calls`. */
  async audit(entry: Pick<McpCallRecord, 'tool_name' | 'status' | 'stage' | 'reason'> & Partial<McpCallRecord>, tool?: MountedTool): Promise<void> {
    const { input } = this;
    const view = await this.deps.audits.record(
      {
        session_id: input.sessionId,
        turn_id: input.turnId,
        agent_id: input.agent?.agent_id ?? null,
        mount_id: tool?.mount.id ?? null,
        mcp_server_id: tool?.mount.mcp_server_id ?? null,
        server_name: tool?.mount.server_name ?? null,
        origin: 'chat',
        trace_id: input.traceId,
        round: this.round || null,
        request_payload: null,
        response_payload: null,
        error_message: null,
        latency_ms: null,
        ...entry,
      },
      tool?.server.secretValues ?? [],
    );
    this.calls.push(view);
  }

  /** Calls a tool within the mount's `max_calls_per_turn` and the agent's `max_tool_calls_total_per_request`; audits it either way. */
  async execute(tool: MountedTool, args: Record<string, unknown>, origin: string): Promise<Execution> {
    const name = tool.descriptor.name;
    const { trace } = this.input;
    // The pre-call gate: the mount's and the request's call limits, for every path that calls (pipeline, quick match,
    // runtime). Decided and reserved before any await, so calls a runtime makes at once cannot both take the last slot.
    const used = this.perMount.get(tool.mount.id) ?? 0;
    const refusal =
      used >= tool.mount.max_calls_per_turn
        ? `max_calls_per_turn (${tool.mount.max_calls_per_turn}) of the mount reached`
        : !this.input.budget.take()
          ? `max_tool_calls_total_per_request (${this.input.budget.limit}) reached`
          : null;
    if (!refusal) this.perMount.set(tool.mount.id, used + 1);
    await trace.span('mcp-pre-call-gate', async (attributes) => {
      Object.assign(attributes, { tool_name: name, origin, should_attempt: refusal === null, ...(refusal && { reason: refusal }) });
    });
    if (refusal) {
      await this.audit({ tool_name: name, status: 'blocked', stage: 'mcp-call', origin, reason: refusal, request_payload: args }, tool);
      return { status: 'blocked', reason: refusal };
    }
    if (tool.mount.approval === 'operator') return this.holdForApproval(tool, args, origin);
    const started = Date.now();
    const outcome = await tool.server.backend.callTool(tool.server.connection, name, args, { timeoutMs: tool.mount.timeout_ms, signal: this.input.signal });
    const latency = Date.now() - started;
    this.observation.mcp_invocation_count++;
    // The post-call gate: the credential never reaches the runtime, the model or the user, even when a server echoes
    // it; a failure becomes the minimal raw JSON and a tracking result keeps only its allowed fields (spec 4.13).
    const raw = await trace.span('mcp-post-call-gate', async (attributes) => {
      Object.assign(attributes, { tool_name: name, status: outcome.status });
      return redactSecrets(
        outcome.status !== 'success'
          ? failurePayload(tool.mount.server_name, name, outcome.error ?? outcome.status)
          : isTrackingTool(name)
            ? projectTrackingResult(outcome.result, name, String(args[TRACKING_ARGUMENT] ?? ''))
            : outcome.result,
        tool.server.secretValues,
      );
    });
    await this.audit(
      {
        tool_name: name,
        status: outcome.status as McpCallStatus,
        stage: 'mcp-call',
        origin,
        reason: null,
        request_payload: args,
        response_payload: raw,
        error_message: outcome.error ?? null,
        latency_ms: latency,
      },
      tool,
    );
    return { status: outcome.status, raw, business: businessPayload(raw, name), error: outcome.error ?? null, latency_ms: latency };
  }

  /** The approval checkpoint: the call is not made; a request waits for an operator, and the audit says why. */
  private async holdForApproval(tool: MountedTool, args: Record<string, unknown>, origin: string): Promise<Execution> {
    const { input } = this;
    const approval = await input.trace.span('mcp-approval-checkpoint', async (attributes) => {
      const held = await this.deps.approvals.request({
        session_id: input.sessionId,
        turn_id: input.turnId,
        agent_id: input.agent!.agent_id,
        mount_id: tool.mount.id,
        mcp_server_id: tool.mount.mcp_server_id,
        tool_name: tool.descriptor.name,
        arguments: args,
        origin,
      });
      Object.assign(attributes, { tool_name: tool.descriptor.name, approval: 'operator', approval_id: held.approval_id });
      return held;
    });
    await this.audit(
      {
        tool_name: tool.descriptor.name,
        status: 'blocked',
        stage: 'mcp-approval-checkpoint',
        origin,
        reason: `approval_required: request ${approval.approval_id}`,
        request_payload: args,
      },
      tool,
    );
    return { status: 'pending_approval', approval_id: approval.approval_id };
  }

  /** `ToolHandle.call` for runtimes that drive tools themselves: mounted and allowed tools only, required arguments checked, limits and audit as for the pipeline. */
  private async callByRuntime(name: string, args: Record<string, unknown>): Promise<ToolCallOutcome> {
    const tool = findTool((await this.toolset()).tools, name);
    if (!tool) {
      await this.audit({
        tool_name: name,
        status: 'blocked',
        stage: 'mcp-call',
        origin: 'tool_handle',
        reason: 'not a mounted, allowed tool of this agent',
        request_payload: args,
      });
      return { status: 'error', result: null, error: `tool "${name}" is not available to this agent` };
    }
    const missing = missingRequired(tool.descriptor.input_schema, args);
    if (missing.length) {
      await this.audit(
        {
          tool_name: name,
          status: 'blocked',
          stage: 'mcp-required-argument-check',
          origin: 'tool_handle',
          reason: `missing required arguments: ${missing.join(', ')}`,
          request_payload: args,
        },
        tool,
      );
      return { status: 'error', result: { missing_identifiers: missing }, error: `missing required arguments: ${missing.join(', ')}` };
    }
    const execution = await this.execute(tool, args, 'tool_handle');
    if (execution.status === 'blocked') return { status: 'error', result: null, error: execution.reason };
    if (execution.status === 'pending_approval') return { status: 'error', result: { approval_id: execution.approval_id }, error: pendingApprovalReply(name) };
    return {
      status: execution.status,
      result: resultForContext(execution.business, this.deps.config.result_context_chars),
      ...(execution.error && { error: execution.error }),
    };
  }
}
