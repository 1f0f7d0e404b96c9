import type { DirectResponseRule } from '../admin/agent-config.js';
import { jsonOutput, renderDirectResponse } from './payloads.js';
import { sameTool } from '../tracking/tracking.js';

/** The `mcp_*` observation fields of spec 4.13, as a turn starts. */
export const baseObservation = () => ({
  mcp_invocation_count: 0,
  mcp_raw_passthrough: false,
  mcp_direct_response: false,
  mcp_output_mode: null as string | null,
  mcp_response_rule_key: null as string | null,
  mcp_quick_match_prefix: null as string | null,
  mcp_format_fallback_used: false,
});

export type McpObservation = ReturnType<typeof baseObservation>;

export interface RuledReply {
  reply: string;
  response_source: 'mcp_direct_response' | 'mcp_raw';
  observation: Partial<McpObservation>;
}

/** The enabled direct-response rule bound to this server and tool (the tracking tools match each other). */
export const matchingRule = (rules: readonly DirectResponseRule[], serverId: string, toolName: string) =>
  rules.find((rule) => rule.enabled && rule.mcp_server_id === serverId && sameTool(rule.tool_name, toolName));

/** Renders by a rule: its output mode, or raw JSON when the chosen fields are missing or empty. */
export function ruledReply(rule: DirectResponseRule, payload: unknown): { reply: string; observation: Partial<McpObservation> } {
  const rendered = renderDirectResponse(payload, rule);
  return {
    reply: rendered.reply,
    observation: {
      mcp_output_mode: rendered.fallback ? 'raw_json' : rule.output_mode,
      mcp_response_rule_key: rule.rule_key,
      mcp_format_fallback_used: rendered.fallback,
    },
  };
}

/**
 * The reply of a turn whose tool path ended in exactly one real invocation:
 * a matching direct-response rule, else the legacy raw passthrough when the
 * tool's key is listed. More than one invocation, or neither, answers
 * `null`: the final model call sums the results up.
 */
export function applyResponseRules(input: {
  rules: readonly DirectResponseRule[];
  serverId: string;
  toolName: string;
  payload: unknown;
  invocationCount: number;
  rawPassthroughKeys: readonly string[];
  wrapRawPassthrough: boolean;
}): RuledReply | null {
  if (input.invocationCount !== 1) return null;
  const rule = matchingRule(input.rules, input.serverId, input.toolName);
  if (rule) {
    const { reply, observation } = ruledReply(rule, input.payload);
    return { reply, response_source: 'mcp_direct_response', observation: { ...observation, mcp_direct_response: true } };
  }
  if (input.rawPassthroughKeys.some((key) => sameTool(key, input.toolName))) {
    return {
      reply: jsonOutput(input.payload, input.wrapRawPassthrough),
      response_source: 'mcp_raw',
      observation: { mcp_raw_passthrough: true, mcp_output_mode: 'raw_json' },
    };
  }
  return null;
}
