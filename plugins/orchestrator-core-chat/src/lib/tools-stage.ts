import type { ToolPipelineResult, TurnContext } from '@agent-host/sdk';

const NOTHING: ToolPipelineResult = { action: 'continue', tool_results: [], guidance: null, observation: {} };

/**
 * The MCP tool pipeline stage of `core_chat_v1`, after the skills: core runs
 * the stages of spec 4.13 (each in its own span) and says whether its answer
 * is the reply or material for the final model call. A failing stage only
 * leaves the tools out; a cancelled turn stops.
 */
export async function runTools(context: TurnContext): Promise<ToolPipelineResult> {
  try {
    return await context.tools.runPipeline();
  } catch (error) {
    if (context.signal.aborted) throw error;
    context.log.warn({ err: error }, 'the MCP tool pipeline failed; the reply goes on without tools');
    return NOTHING;
  }
}

/** The part of the system message that carries the tool results, or what to ask the user for when the tool path stopped. */
export function toolSection(tools: ToolPipelineResult): string | undefined {
  if (tools.action !== 'continue') return undefined;
  const parts: string[] = [];
  if (tools.tool_results.length) {
    const text = (result: unknown) => (typeof result === 'string' ? result : JSON.stringify(result));
    parts.push('Results of the tools called for this request:\n\n' + tools.tool_results.map((r) => `[${r.tool_name}] ${text(r.result)}`).join('\n\n'));
  }
  if (tools.guidance) {
    parts.push(
      `A tool could not be called yet. ${tools.guidance.message} Do not guess a value. Details: ${JSON.stringify({ missing_identifiers: tools.guidance.missing_identifiers, candidate_identifier_arguments: tools.guidance.candidate_identifier_arguments, candidate_identifiers: tools.guidance.candidate_identifiers })}`,
    );
  }
  return parts.length ? parts.join('\n\n') : undefined;
}
