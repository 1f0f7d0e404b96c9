import type { ToolGuidance, ToolPipelineResult, ToolResultContext } from '@agent-host/sdk';
import { pendingApprovalReply } from './approvals.js';
import { buildToolArguments, generateArguments } from '../tracking/arguments.js';
import { attemptGate, missingGuidance, preGenerationGate, type GateVerdict } from './gates.js';
import { trackingIntent } from './intent-gates.js';
import { missingRequired } from './policy.js';
import { resultForContext } from './payloads.js';
import { applyResponseRules } from './response-rules.js';
import { selectTool } from './selection.js';
import { isTrackingTool, trackingSignals } from '../tracking/tracking.js';
import type { ToolTurn } from './tool-turn.js';

/** The `_tool_selection` pseudo tool of the one `skipped` record written when no tool matches (spec 3.6). */
export const TOOL_SELECTION = '_tool_selection';

/**
 * The MCP tool pipeline of spec 4.13, one round: selection, pre-generation
 * gate, argument generation, `build_tool_arguments`, attempt gate,
 * required-argument check, call, response rules. Each stage runs in its own
 * trace span and leaves an `mcp_context` entry; every stop is audited.
 */
export async function runToolPipeline(turn: ToolTurn): Promise<ToolPipelineResult> {
  const { input } = turn;
  const span = <T>(name: string, run: () => Promise<T>, describe: (value: T) => Record<string, unknown>) =>
    input.trace.span(name, async (attributes) => {
      const value = await run();
      const described = describe(value);
      Object.assign(attributes, described);
      turn.context.push({ stage: name, round: turn.round, ...described });
      return value;
    });
  const proceed = (guidance: ToolGuidance | null = null, results: ToolResultContext[] = []): ToolPipelineResult => ({
    action: 'continue',
    tool_results: results,
    guidance,
    observation: { ...turn.observation, ...(guidance && { mcp_guidance: guidance }) },
  });

  const toolset = await turn.toolset();
  if (toolset.mounts.length === 0) return proceed();
  turn.round++;
  const intent = trackingIntent(turn.responseConfig.intent_gate_rules);
  const tracking = trackingSignals(input.message, turn.userHistory, intent.matches);
  const model = () => input.models.chatModel('tool_call');

  const selection = await span(
    'mcp-tool-selection-decision',
    async () =>
      toolset.tools.length === 0
        ? ({ kind: 'skip', source: 'deterministic', reason: 'no eligible tool', mode: null } as const)
        : selectTool({
            tools: toolset.tools,
            message: input.message,
            userHistory: turn.userHistory,
            tracking,
            guidance: turn.guidance.selection,
            model,
            signal: input.signal,
          }),
    (s) => ({ decision: s.kind === 'tool' ? s.tool.descriptor.name : 'no_tool', source: s.source, reason: s.reason, output_mode: s.mode }),
  );
  if (selection.kind === 'skip') {
    await turn.audit({ tool_name: TOOL_SELECTION, status: 'skipped', stage: 'mcp-tool-selection-decision', reason: selection.reason });
    return proceed();
  }
  const tool = selection.tool;
  const { name, input_schema: schema } = tool.descriptor;
  const trackingTool = isTrackingTool(name);
  const stop = async (stage: string, verdict: Exclude<GateVerdict, { should_attempt: true }>, args: Record<string, unknown> | null = null) => {
    await turn.audit(
      {
        tool_name: name,
        status: verdict.outcome,
        stage,
        reason: verdict.reason,
        request_payload: args,
        response_payload: verdict.outcome === 'blocked' ? verdict.guidance : null,
      },
      tool,
    );
    return proceed(verdict.outcome === 'blocked' ? verdict.guidance : null);
  };

  const pre = await span(
    'mcp-pre-generation-gate',
    async () =>
      preGenerationGate({
        toolName: name,
        schema,
        messageType: input.messageType,
        message: input.message,
        tracking: trackingTool ? tracking : null,
        allowFollowUp: intent.allowFollowUp,
        decision: selection.decision,
      }),
    verdictAttributes,
  );
  if (!pre.should_attempt) return stop('mcp-pre-generation-gate', pre);

  const skipGeneration = trackingTool && pre.identifier_source === 'current_message';
  const generated = await span(
    'mcp-argument-generation',
    async () =>
      skipGeneration
        ? { skipped: true, reason: 'the identifier comes deterministically from the current message', arguments: {}, mode: null }
        : generateArguments({
            toolName: name,
            description: tool.descriptor.description,
            schema,
            message: input.message,
            userHistory: turn.userHistory,
            guidance: turn.guidance.arguments,
            model,
            signal: input.signal,
          }),
    (g) => ({ skipped: g.skipped, reason: g.reason, output_mode: g.mode, argument_names: Object.keys(g.arguments) }),
  );
  const built = buildToolArguments({
    toolName: name,
    schema,
    generated: generated.arguments,
    message: input.message,
    userHistory: turn.userHistory,
    messageIds: tracking.messageIds,
    round: turn.round,
  });
  turn.context.push({
    stage: 'build_tool_arguments',
    round: turn.round,
    argument_names: Object.keys(built.arguments),
    canonicalized: built.canonicalized,
    dropped: built.dropped,
    extracted: built.extracted,
  });

  const attempt = await span('mcp-tool-attempt-gate', async () => attemptGate(name, schema, built.arguments), verdictAttributes);
  if (!attempt.should_attempt) return stop('mcp-tool-attempt-gate', attempt, built.arguments);

  const missing = await span(
    'mcp-required-argument-check',
    async () => missingRequired(schema, built.arguments),
    (m) => ({ missing_required: m, should_attempt: m.length === 0 }),
  );
  if (missing.length)
    return stop(
      'mcp-required-argument-check',
      {
        should_attempt: false,
        outcome: 'blocked',
        reason: `missing required arguments: ${missing.join(', ')}`,
        guidance: missingGuidance(name, schema, missing),
      },
      built.arguments,
    );

  const execution = await span(
    'mcp-call',
    () => turn.execute(tool, built.arguments, 'chat'),
    (e) => ({ tool_name: name, status: e.status, ...('latency_ms' in e && { latency_ms: e.latency_ms }) }),
  );
  if (execution.status === 'blocked') return proceed();
  if (execution.status === 'pending_approval') {
    // The held call has no result to answer from: the turn says it waits for an operator, in place of a reply.
    return { action: 'reply', reply: pendingApprovalReply(name), response_source: 'mcp_approval_pending', observation: { ...turn.observation } };
  }
  const ruled = applyResponseRules({
    rules: turn.responseConfig.direct_response_rules,
    serverId: tool.mount.mcp_server_id,
    toolName: name,
    payload: execution.business,
    invocationCount: turn.observation.mcp_invocation_count,
    rawPassthroughKeys: turn.deps.config.raw_passthrough_tool_keys,
    wrapRawPassthrough: turn.deps.config.raw_passthrough_wrap_json_code_block,
  });
  if (!ruled)
    return proceed(null, [{ tool_name: name, status: execution.status, result: resultForContext(execution.business, turn.deps.config.result_context_chars) }]);
  // Only on this reply: a runtime that goes on to another round (and another invocation) has no direct response.
  return { action: 'reply', reply: ruled.reply, response_source: ruled.response_source, observation: { ...turn.observation, ...ruled.observation } };
}

function verdictAttributes(verdict: GateVerdict): Record<string, unknown> {
  return verdict.should_attempt
    ? { should_attempt: true, reason: verdict.reason, identifier_source: verdict.identifier_source }
    : { should_attempt: false, outcome: verdict.outcome, reason: verdict.reason, ...(verdict.outcome === 'blocked' && { guidance: verdict.guidance }) };
}
