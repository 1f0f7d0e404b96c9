import type { TurnResult } from '@agent-host/sdk';
import type { QuickMatchRule } from '../admin/agent-config.js';
import { parseIdentifiers } from '../tracking/identifiers.js';
import { jsonOutput } from './payloads.js';
import { missingRequired } from './policy.js';
import { pendingApprovalReply } from './approvals.js';
import { ruledReply } from './response-rules.js';
import { findTool, type MountedTool } from './toolset.js';
import { isTrackingTool } from '../tracking/tracking.js';
import type { ToolTurn } from './tool-turn.js';

/** The enabled rule whose prefix starts the message as a command (the longest, case-insensitive), and the text after it. */
export function matchQuickRule(rules: readonly QuickMatchRule[], message: string): { rule: QuickMatchRule; suffix: string } | null {
  const text = message.trim();
  const lower = text.toLowerCase();
  const hits = rules.filter(
    (r) =>
      r.enabled &&
      lower.startsWith(r.prefix.toLowerCase()) &&
      (text.length === r.prefix.length || /[\s:：=]/u.test(text[r.prefix.length]!) || /\W$/.test(r.prefix)),
  );
  const rule = hits.sort((a, b) => b.prefix.length - a.prefix.length)[0];
  return rule
    ? {
        rule,
        suffix: text
          .slice(rule.prefix.length)
          .replace(/^[\s:：=]+/u, '')
          .trim(),
      }
    : null;
}

const usage = (prefix: string) =>
  `Usage: ${prefix} <cargo number>. Please send one cargo number (bill of lading, container or booking number) after ${prefix}.`;

/**
 * The quick-match short circuit (spec 4.13; `POST /stream`, `user_chat`
 * only): a prefix command calls one tool with the text after it, with no
 * runtime and no model. Mount and allowlist checks, the identifier gates and
 * the required-argument check still run, and any block means no call; an
 * empty suffix or a missing required field answers usage guidance.
 */
export async function runQuickMatch(turn: ToolTurn): Promise<TurnResult | null> {
  const { input } = turn;
  if (!input.agent || input.messageType !== 'user_chat') return null;
  const hit = matchQuickRule(turn.responseConfig.quick_match_rules, input.message);
  if (!hit) return null;
  const { rule, suffix } = hit;
  turn.round++;
  const answer = (reply: string): TurnResult => {
    turn.observation.mcp_quick_match_prefix = rule.prefix;
    return { reply, response_source: 'mcp_quick_match', observation: { ...turn.observation } };
  };
  const block = async (reason: string, reply: string, tool?: MountedTool, args: Record<string, unknown> | null = null) => {
    await turn.audit({ tool_name: rule.tool_name, status: 'blocked', stage: 'quick-match', origin: 'quick_match', reason, request_payload: args }, tool);
    turn.context.push({ stage: 'quick-match', prefix: rule.prefix, tool_name: rule.tool_name, blocked: reason });
    return answer(reply);
  };

  const tool = findTool(
    (await turn.toolset()).tools.filter((t) => t.mount.mcp_server_id === rule.mcp_server_id),
    rule.tool_name,
  );
  if (!tool)
    return block(
      `tool "${rule.tool_name}" is not offered by an active mount of server ${rule.mcp_server_id} (or not in its allowed_tools)`,
      `${rule.prefix} is not available right now.`,
    );
  if (suffix === '') return block('empty suffix', usage(rule.prefix), tool);
  let value: string = suffix;
  if (isTrackingTool(rule.tool_name)) {
    const ids = parseIdentifiers(suffix);
    if (ids.length !== 1)
      return block(ids.length ? 'several identifiers after the prefix' : 'no identifier after the prefix', usage(rule.prefix), tool, {
        [rule.suffix_parameter_name]: suffix,
      });
    value = ids[0]!.value;
  }
  const args = { [rule.suffix_parameter_name]: value, query: input.message, round: turn.round };
  const missing = missingRequired(tool.descriptor.input_schema, args);
  if (missing.length) return block(`missing required arguments: ${missing.join(', ')}`, usage(rule.prefix), tool, args);

  const execution = await turn.execute(tool, args, 'quick_match');
  turn.context.push({ stage: 'quick-match', prefix: rule.prefix, tool_name: rule.tool_name, status: execution.status });
  if (execution.status === 'blocked') return answer(`${rule.prefix} cannot run in this request: ${execution.reason}.`);
  if (execution.status === 'pending_approval') return answer(pendingApprovalReply(rule.tool_name));
  const direct = rule.response_rule_key ? turn.responseConfig.direct_response_rules.find((r) => r.rule_key === rule.response_rule_key) : undefined;
  if (!direct) {
    turn.observation.mcp_output_mode = 'raw_json';
    return answer(jsonOutput(execution.business, false));
  }
  const ruled = ruledReply(direct, execution.business);
  Object.assign(turn.observation, ruled.observation);
  return answer(ruled.reply);
}
