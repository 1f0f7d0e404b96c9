import type { JSONSchema } from '@langchain/core/utils/json_schema';
import { AIMessage, AIMessageChunk, HumanMessage, createAgent, createMiddleware, tool } from 'langchain';
import type {
  ChatMessage,
  Orchestrator,
  RetrievedChunk,
  ScheduleRequest,
  ToolDescriptor,
  ToolHandle,
  ToolResultContext,
  TurnContext,
  TurnEvent,
  TurnResult,
} from '@agent-host/sdk';
import { SdkChatModel, detached } from './sdk-chat-model.js';

const SEARCH_KNOWLEDGE: ToolDescriptor = {
  name: 'search_knowledge',
  description: "Search the agent's knowledge sources; returns matching passages.",
  input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};

/** The scheduling handle as tools, offered when the turn may schedule (spec 4.6). */
const SCHEDULING_TOOLS: ToolDescriptor[] = [
  {
    name: 'schedule_task',
    description:
      'Schedule a reminder or task in this conversation. schedule is {"kind":"once","run_at":"<ISO 8601 with offset>"}, {"kind":"interval","every_seconds":n} or {"kind":"cron","expression":"<five fields>","time_zone":"<IANA zone>"}; message is what to do then.',
    input_schema: {
      type: 'object',
      properties: { schedule: { type: 'object' }, message: { type: 'string' } },
      required: ['schedule', 'message'],
    },
  },
  { name: 'list_scheduled_tasks', description: "List this conversation's scheduled tasks.", input_schema: { type: 'object', properties: {} } },
  {
    name: 'cancel_scheduled_task',
    description: "Cancel one of this conversation's scheduled tasks by its task_id.",
    input_schema: { type: 'object', properties: { task_id: { type: 'string' } }, required: ['task_id'] },
  },
];
const SCHEDULING_NAMES = new Set(SCHEDULING_TOOLS.map((t) => t.name));

/**
 * `react_agent_v1` (experimental): LangChain's agent loop (`createAgent`) over
 * the turn's handles. Every model call goes through the SDK chat models core
 * hands the turn (first step the `tool_call` stage, later steps `final`),
 * their tokens are streamed as they arrive, and the tools the model asks for
 * run through core's skill and tool handles (policy and audit enforced
 * there): the agent's mounted skills, then its MCP tools. Retrieval is
 * offered as the tool `search_knowledge`, and scheduled tasks, where the
 * turn may schedule, as `schedule_task`, `list_scheduled_tasks` and
 * `cancel_scheduled_task`. The loop sees the user's recent
 * messages within `history_user_message_window` (spec 4.13), not the whole
 * conversation, since it decides tool calls and their arguments. With a
 * grounding policy the loop only gathers evidence (its text is not shown);
 * the reply is the SDK's grounded answer over what it searched and called,
 * one more model call.
 */
export class ReactAgentOrchestrator implements Orchestrator {
  readonly displayName = 'ReAct agent (experimental)';
  readonly description = 'Experimental tool-calling agent loop over the same tool and retrieval handles; non-default until its evaluation gates pass.';
  readonly experimental = true;
  readonly grounding = true;

  /** @param maxSteps model calls per turn; the last one is offered no tools, so it must answer. */
  constructor(private readonly maxSteps: number) {}

  async *run(context: TurnContext): AsyncGenerator<TurnEvent, TurnResult, void> {
    const toolCalls: string[] = [];
    const found: Found = { chunks: [], results: [] };
    // Skills come before MCP tools (spec 4.12), so a skill keeps its name when a tool has the same one.
    const skills = await context.skills.list();
    const skillNames = new Set(skills.map((s) => s.name));
    const mcpTools = (await context.tools.list()).filter((t) => !skillNames.has(t.name) && !SCHEDULING_NAMES.has(t.name));
    const scheduling = context.scheduling.available ? SCHEDULING_TOOLS : [];
    const tools = [SEARCH_KNOWLEDGE, ...scheduling, ...skills, ...mcpTools].map((descriptor) =>
      tool(
        (args: Record<string, unknown>) => {
          toolCalls.push(descriptor.name);
          const handle = skillNames.has(descriptor.name) ? context.skills : context.tools;
          return detached(() => context.trace.span(`react-tool-${descriptor.name}`, () => callTool(context, handle, descriptor.name, args, found)));
        },
        { name: descriptor.name, description: descriptor.description, schema: descriptor.input_schema as JSONSchema },
      ),
    );

    let steps = 0;
    const maxSteps = this.maxSteps;
    const stepBound = createMiddleware({
      name: 'ReactStepBound',
      async wrapModelCall(request, handler) {
        steps += 1;
        const last = steps === maxSteps;
        const response = await handler({
          ...request,
          ...(steps > 1 && { model: new SdkChatModel(context.models.chatModel('final')) }),
          ...(last && { tools: [] }),
        });
        // A call the model makes on the last step anyway is not run: its result could never reach the model.
        return last && response.tool_calls?.length ? new AIMessage({ id: response.id, content: response.content }) : response;
      },
    });
    const agent = createAgent({
      model: new SdkChatModel(context.models.chatModel('tool_call')),
      tools,
      middleware: [stepBound],
      ...(context.agent.system_prompt && { systemPrompt: context.agent.system_prompt }),
    });

    const stream = await agent.stream(
      { messages: [...context.recent_user_messages.map((text) => new HumanMessage(text)), new HumanMessage(context.message)] },
      // A step is a model node and a tools node; the middleware ends the loop, the limit only backs it up.
      { streamMode: ['messages'], signal: context.signal, recursionLimit: 2 * maxSteps + 1 },
    );
    // The reply is exactly what the user saw: every step's streamed text, a step's words before its tool calls included.
    let reply = '';
    const grounded = context.grounding.policy !== null;
    for await (const [mode, payload] of stream) {
      if (mode !== 'messages') continue;
      const [chunk] = payload;
      // A grounded turn shows only the grounded answer below; the loop only gathers its evidence.
      if (AIMessageChunk.isInstance(chunk) && chunk.text && !grounded) {
        reply += chunk.text;
        yield { type: 'token', content: chunk.text };
      }
    }
    const observation = { react_steps: steps, react_tool_calls: toolCalls };
    if (!grounded) return { reply, response_source: 'llm_generated', observation };
    // The evidence: what the loop searched and what its tools returned; a loop that did not search gets the message's passages.
    const chunks = found.chunks.length ? found.chunks : await context.retrieval.search(context.message);
    const evidence = context.grounding.evidence({ chunks, tool_results: found.results });
    const messages: ChatMessage[] = [
      ...(context.agent.system_prompt ? [{ role: 'system' as const, content: context.agent.system_prompt }] : []),
      ...context.history,
      { role: 'user', content: context.message },
    ];
    const answer = yield* context.grounding.answer({ model: context.models.chatModel('final'), messages, evidence, signal: context.signal });
    return { reply: answer.reply, response_source: answer.response_source, observation: { ...observation, grounding_path: answer.decision.path } };
  }
}

/** What the loop's tool calls found: passages from `search_knowledge`, and skill and MCP results. */
interface Found {
  chunks: RetrievedChunk[];
  results: ToolResultContext[];
}

async function callTool(context: TurnContext, handle: ToolHandle, name: string, args: Record<string, unknown>, found: Found): Promise<string> {
  if (name === SEARCH_KNOWLEDGE.name) {
    const chunks = await context.retrieval.search(String(args.query));
    found.chunks.push(...chunks);
    return chunks.map((c) => c.content).join('\n\n') || 'no matching passages';
  }
  if (name === 'schedule_task')
    return JSON.stringify(await context.scheduling.create({ schedule: args.schedule as ScheduleRequest, message: String(args.message) }));
  if (name === 'list_scheduled_tasks') return JSON.stringify(await context.scheduling.list());
  if (name === 'cancel_scheduled_task') return JSON.stringify(await context.scheduling.cancel(String(args.task_id)));
  const outcome = await handle.call(name, args);
  found.results.push({ tool_name: name, status: outcome.status, result: outcome.result });
  return JSON.stringify(outcome.status === 'success' ? outcome.result : { status: outcome.status, error: outcome.error });
}
