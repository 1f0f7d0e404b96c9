import type { ChatMessage, Orchestrator, RetrievedChunk, ToolPipelineResult, TurnContext, TurnEvent, TurnResult } from '@agent-host/sdk';
import { runScheduler } from './scheduler-stage.js';
import { runSkills, skillSection, type SkillResult } from './skills-stage.js';
import { runTools, toolSection } from './tools-stage.js';

const CORRECTION_LABEL = 'verified correction';
/** A passage of a published correction (its source is the agent's managed_correction source). */
const isCorrection = (chunk: RetrievedChunk) => chunk.metadata.document_origin === 'managed_correction';

/** The system message: the agent's prompt, the retrieved passages, the skills' results and the tools' results or guidance. */
export function systemMessage(context: TurnContext, chunks: RetrievedChunk[], skills: SkillResult[] = [], tools?: ToolPipelineResult): ChatMessage | undefined {
  const parts: string[] = [];
  if (context.agent.system_prompt) parts.push(context.agent.system_prompt);
  if (chunks.length) {
    const hide = context.agent.hide_rag_source_filename;
    const label = (c: RetrievedChunk) => (isCorrection(c) ? CORRECTION_LABEL : hide ? null : c.document_filename);
    const intro = chunks.some(isCorrection)
      ? `Answer from these passages when they are relevant; passages marked ${CORRECTION_LABEL} are operators' corrections of earlier answers and take precedence:\n\n`
      : 'Answer from these passages when they are relevant:\n\n';
    parts.push(intro + chunks.map((c) => (label(c) ? `[${label(c)}] ${c.content}` : c.content)).join('\n\n'));
  }
  const skillText = skillSection(skills);
  if (skillText) parts.push(skillText);
  const toolText = tools && toolSection(tools);
  if (toolText) parts.push(toolText);
  return parts.length ? { role: 'system', content: parts.join('\n\n') } : undefined;
}

/** A reply that did not come from a model, streamed word by word like one. */
function* words(reply: string): Generator<TurnEvent> {
  for (const content of reply.split(/(?<= )/)) if (content) yield { type: 'token', content };
}

/**
 * `core_chat_v1`: the scheduler stage (a request to schedule, list or cancel a task is answered there), retrieval
 * from the agent's mounted sources, the skills, the MCP tool pipeline (run by core; a direct response ends the turn),
 * then the final model call streamed token by token, or, when the agent has a grounding policy, the SDK's grounded
 * answer over that evidence (cited, with its low-confidence and failure paths). Core applies fixed responses, quick match, limits and
 * persistence around it.
 */
export class CoreChatOrchestrator implements Orchestrator {
  readonly displayName = 'Core chat';
  readonly description =
    'Default chat runtime: fixed responses, quick match, scheduled tasks from the conversation, retrieval, skills, MCP tool pipeline and a final model call.';
  readonly experimental = false;
  readonly grounding = true;

  async *run(context: TurnContext): AsyncGenerator<TurnEvent, TurnResult, void> {
    const scheduled = await runScheduler(context);
    if (scheduled) {
      yield* words(scheduled.reply);
      return { reply: scheduled.reply, response_source: 'scheduler', observation: { scheduler: scheduled.decision } };
    }
    const chunks = await context.trace.span('rag-retrieval', async (attributes) => {
      const found = await context.retrieval.search(context.message);
      attributes.chunk_count = found.length;
      return found;
    });
    const skills = await runSkills(context);
    const tools = await runTools(context);
    if (tools.action === 'reply') {
      // A direct response or raw passthrough is the whole reply: no final model call.
      yield* words(tools.reply);
      return {
        reply: tools.reply,
        response_source: tools.response_source,
        observation: { rag_chunk_count: chunks.length, skill_result_count: skills.length, ...tools.observation },
      };
    }
    const observation = { rag_chunk_count: chunks.length, skill_result_count: skills.length, ...tools.observation };
    // A tool that needs an identifier from the user asks for it: a question cites nothing, so it is not grounded.
    if (context.grounding.policy && !tools.guidance) {
      // Grounded: the passages and results become numbered evidence the answer must cite.
      const evidence = context.grounding.evidence({ chunks, tool_results: tools.tool_results, skill_results: skills });
      const system = systemMessage(context, [], []);
      const messages: ChatMessage[] = [...(system ? [system] : []), ...context.history, { role: 'user', content: context.message }];
      const answer = yield* context.grounding.answer({ model: context.models.chatModel('final'), messages, evidence, signal: context.signal });
      return {
        reply: answer.reply,
        response_source: answer.response_source,
        observation: { ...observation, grounding_path: answer.decision.path, grounding_cited_ids: answer.decision.cited_ids },
      };
    }
    const system = systemMessage(context, chunks, skills, tools);
    const messages: ChatMessage[] = [...(system ? [system] : []), ...context.history, { role: 'user', content: context.message }];
    // Core picks the reply's model (routing's general, complex-task or reasoning slot) from the message.
    const model = context.models.chatModel('final');
    let reply = '';
    for await (const chunk of model.stream(messages, { signal: context.signal })) {
      if (chunk.type !== 'token') continue;
      reply += chunk.content;
      yield { type: 'token', content: chunk.content };
    }
    return { reply, response_source: 'llm_generated', observation };
  }
}
