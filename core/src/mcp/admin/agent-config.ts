import { z } from 'zod';
import { linearPattern } from '../tracking/linear-pattern.js';

const label = z.string().trim().min(1).max(200);
const capability = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .transform((v) => v.toLowerCase());

/** Longest pattern an intent gate accepts; matching runs on every chat message. */
export const MAX_PATTERN_LENGTH = 500;

/** A `regex_patterns[]` entry: bounded, and compiled by RE2 (linear time), which refuses backreferences and lookaround. */
const safePattern = z
  .string()
  .min(1)
  .max(MAX_PATTERN_LENGTH)
  .superRefine((pattern, ctx) => {
    try {
      linearPattern(pattern);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `not a regular expression RE2 compiles (no backreferences or lookaround): ${(error as Error).message}` });
    }
  });

const directResponseRule = z
  .object({
    rule_key: label,
    enabled: z.boolean().default(true),
    mcp_server_id: z.string().uuid(),
    tool_name: label,
    output_mode: z.enum(['raw_json', 'json_subset', 'text']).default('raw_json'),
    selected_fields: z.array(label).max(100).default([]),
    prefix_text: z.string().max(5000).default(''),
    suffix_text: z.string().max(5000).default(''),
    wrap_json_code_block: z.boolean().default(false),
  })
  .strict();

const quickMatchRule = z
  .object({
    prefix: z.string().trim().min(1).max(100),
    enabled: z.boolean().default(true),
    mcp_server_id: z.string().uuid(),
    tool_name: label,
    suffix_parameter_name: label,
    // Unset, empty or blank: raw JSON, and `mcp_response_rule_key` null.
    response_rule_key: z
      .string()
      .max(200)
      .nullable()
      .optional()
      .transform((v) => (v?.trim() ? v.trim() : null)),
  })
  .strict();

const intentGateRule = z
  .object({
    tool_capability: capability,
    keywords: z.array(z.string().trim().min(1).max(200)).max(200).default([]),
    regex_patterns: z.array(safePattern).max(50).default([]),
    match_source_mode: z.enum(['default', 'append', 'replace']).default('default'),
    allow_contextual_follow_up: z.boolean().default(true),
    enabled: z.boolean().default(true),
  })
  .strict();

/** `mcp_response_config` (spec 4.13), validated when an agent is saved. */
export const mcpResponseConfig = z
  .object({
    direct_response_rules: z.array(directResponseRule).max(100).default([]),
    quick_match_rules: z.array(quickMatchRule).max(100).default([]),
    intent_gate_rules: z.array(intentGateRule).max(100).default([]),
  })
  .strict()
  .superRefine((config, ctx) => {
    const keys = new Set<string>();
    config.direct_response_rules.forEach((rule, i) => {
      if (keys.has(rule.rule_key))
        ctx.addIssue({ code: 'custom', path: ['direct_response_rules', i, 'rule_key'], message: `rule_key "${rule.rule_key}" is used twice` });
      keys.add(rule.rule_key);
      if (rule.output_mode !== 'raw_json' && rule.selected_fields.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['direct_response_rules', i, 'selected_fields'],
          message: `output_mode ${rule.output_mode} needs selected_fields`,
        });
      }
    });
    const prefixes = new Set<string>();
    config.quick_match_rules.forEach((rule, i) => {
      const prefix = rule.prefix.toLowerCase();
      if (prefixes.has(prefix)) ctx.addIssue({ code: 'custom', path: ['quick_match_rules', i, 'prefix'], message: `prefix "${rule.prefix}" is used twice` });
      prefixes.add(prefix);
      if (rule.response_rule_key !== null && !keys.has(rule.response_rule_key)) {
        ctx.addIssue({
          code: 'custom',
          path: ['quick_match_rules', i, 'response_rule_key'],
          message: `no direct_response_rules entry has rule_key "${rule.response_rule_key}"`,
        });
      }
    });
  });

/** `mcp_runtime_config` (spec 4.13): per-agent history window and prompt guidance. */
export const mcpRuntimeConfig = z
  .object({
    history_user_message_window: z.number().int().min(0).max(50).optional(),
    tool_selection_prompt_guidance: z.string().max(4000).optional(),
    tool_argument_prompt_guidance: z.string().max(4000).optional(),
  })
  .strict();

export type McpResponseConfig = z.output<typeof mcpResponseConfig>;
export type McpRuntimeConfig = z.output<typeof mcpRuntimeConfig>;
export type DirectResponseRule = McpResponseConfig['direct_response_rules'][number];
export type QuickMatchRule = McpResponseConfig['quick_match_rules'][number];
export type IntentGateRule = McpResponseConfig['intent_gate_rules'][number];

/** The stored config of an agent snapshot, with defaults filled; configs saved before validation existed read as empty. */
export function readResponseConfig(value: unknown): McpResponseConfig {
  const parsed = mcpResponseConfig.safeParse(value ?? {});
  return parsed.success ? parsed.data : { direct_response_rules: [], quick_match_rules: [], intent_gate_rules: [] };
}

export function readRuntimeConfig(value: unknown): McpRuntimeConfig {
  const parsed = mcpRuntimeConfig.safeParse(value ?? {});
  return parsed.success ? parsed.data : {};
}
