import { safeValidate, z, type SkillBackend, type SkillInvocation, type ToolCallOutcome, type ValidationIssue } from '@agent-host/sdk';

/** A skill version's `config` for the `mcp` backend. */
export const mcpSkillConfig = z
  .object({
    /** The tool of the MCP server (`backend_ref_id`) the skill runs. */
    tool_name: z.string({ error: 'tool_name is required: the tool of the MCP server this skill runs' }).trim().min(1, 'tool_name is required'),
    /** Fixed arguments, sent on every call. */
    arguments: z.record(z.string(), z.unknown()).default({}),
    /** The tool argument that receives the skill's `query` (the user's request); unset: the query is not sent. */
    query_argument: z.string().trim().min(1).nullable().default(null),
  })
  .strict();

export type McpSkillConfig = z.output<typeof mcpSkillConfig>;

/** The arguments of the tool call: the fixed ones, with the query under `query_argument`. */
export function toolArguments(config: McpSkillConfig, input: Record<string, unknown>): Record<string, unknown> {
  return config.query_argument && input.query !== undefined ? { ...config.arguments, [config.query_argument]: input.query } : { ...config.arguments };
}

/** `mcp`: one skill call is one `tools/call` of `tool_name` on the skill's MCP server. */
export class McpSkillBackend implements SkillBackend {
  validateConfig(config: Readonly<Record<string, unknown>>): ValidationIssue[] {
    const parsed = safeValidate(mcpSkillConfig, config, ['config']);
    return parsed.success ? [] : parsed.issues;
  }

  async invoke(invocation: SkillInvocation): Promise<ToolCallOutcome> {
    if (!invocation.tools) return { status: 'error', result: null, error: 'no MCP server was handed to the mcp skill backend' };
    const parsed = safeValidate(mcpSkillConfig, invocation.config);
    if (!parsed.success)
      return {
        status: 'error',
        result: null,
        error: `the skill version's config is not valid for the mcp backend: ${parsed.issues.map((i) => `${i.loc.join('.')} ${i.msg}`).join('; ')}`,
      };
    // The tools handle already applies the invocation's deadline and signal to each call.
    return invocation.tools.call(parsed.data.tool_name, toolArguments(parsed.data, invocation.input));
  }
}
