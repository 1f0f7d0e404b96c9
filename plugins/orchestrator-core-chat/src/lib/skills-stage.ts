import type { TurnContext } from '@agent-host/sdk';

/** What one skill returned, for the final prompt. */
export interface SkillResult {
  name: string;
  result: unknown;
}

/**
 * The skills stage of `core_chat_v1`, before the MCP tool pipeline: each
 * mounted skill, highest priority first, is called with the user's request.
 * Core enforces the mount policy and the tool budget and audits every call;
 * a failing skill, or a failing stage, only leaves its result out.
 */
export function runSkills(context: TurnContext): Promise<SkillResult[]> {
  return context.trace.span('skills', async (attributes) => {
    const results: SkillResult[] = [];
    try {
      const skills = await context.skills.list();
      attributes.skill_count = skills.length;
      for (const skill of skills) {
        if (context.signal.aborted) break;
        const outcome = await context.trace.span('skill-call', async (call) => {
          call.skill_name = skill.name;
          const answer = await context.skills.call(skill.name, { query: context.message });
          call.status = answer.status;
          return answer;
        });
        if (outcome.status === 'success') results.push({ name: skill.name, result: outcome.result });
      }
    } catch (error) {
      context.log.warn({ err: error }, 'the skills stage failed; the reply goes on without skill results');
    }
    attributes.result_count = results.length;
    return results;
  });
}

/** The part of the system message that carries the skills' results. */
export function skillSection(results: SkillResult[]): string | undefined {
  if (!results.length) return undefined;
  const text = (result: unknown) => (typeof result === 'string' ? result : JSON.stringify(result));
  return 'Results of the skills run for this request:\n\n' + results.map((r) => `[${r.name}] ${text(r.result)}`).join('\n\n');
}
