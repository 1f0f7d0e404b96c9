import type { ChatMessage, Orchestrator, ToolCallRequest, TurnContext, TurnEvent, TurnResult } from '@agent-host/sdk';

/**
 * `react_agent_v1` (experimental): a reason-act loop. Each step streams the
 * model's answer; when the model asks for tools, core's tool handle runs them
 * (policy and audit enforced there) and the results go back to the model.
 * Retrieval is offered as the tool `search_knowledge`.
 */
export class ReactAgentOrchestrator implements Orchestrator {
  readonly displayName = 'ReAct agent (experimental)';
  readonly description = 'Experimental tool-calling agent loop over the same tool and retrieval handles; non-default until its evaluation gates pass.';
  readonly experimental = true;

  constructor(private readonly maxSteps: number) {}

  async *run(context: TurnContext): AsyncGenerator<TurnEvent, TurnResult, void> {
    const tools = [
      {
        name: 'search_knowledge',
        description: "Search the agent's knowledge sources; returns matching passages.",
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
      ...(await context.tools.list()).map((t) => ({ name: t.name, description: t.description, parameters: t.input_schema })),
    ];
    const messages: ChatMessage[] = [
      ...(context.agent.system_prompt ? [{ role: 'system' as const, content: context.agent.system_prompt }] : []),
      ...context.history,
      { role: 'user', content: context.message },
    ];
    const toolCalls: string[] = [];
    for (let step = 1; step <= this.maxSteps; step++) {
      const model = context.models.chatModel(step === 1 ? 'tool_call' : 'general');
      const offerTools = step < this.maxSteps;
      let reply = '';
      const calls: ToolCallRequest[] = [];
      for await (const chunk of model.stream(messages, { signal: context.signal, ...(offerTools && { tools }) })) {
        if (chunk.type === 'token') {
          reply += chunk.content;
          yield { type: 'token', content: chunk.content };
        } else if (chunk.type === 'tool_call') {
          calls.push(chunk.call);
        }
      }
      // The last step offers no tools: a call the model makes anyway is not run
      // (its result could never reach the model), and the step's text is the reply.
      if (calls.length === 0 || !offerTools) {
        return { reply, response_source: 'model', observation: { react_steps: step, react_tool_calls: toolCalls } };
      }
      messages.push({ role: 'assistant', content: reply, tool_calls: calls });
      for (const call of calls) {
        toolCalls.push(call.name);
        const content = await context.trace.span(`react-tool-${call.name}`, () => this.callTool(context, call));
        messages.push({ role: 'tool', content, tool_call_id: call.id });
      }
    }
    return { reply: '', response_source: 'model', observation: { react_steps: this.maxSteps, react_tool_calls: toolCalls } };
  }

  private async callTool(context: TurnContext, call: ToolCallRequest): Promise<string> {
    if (call.name === 'search_knowledge') {
      const query = typeof call.arguments.query === 'string' ? call.arguments.query : context.message;
      const chunks = await context.retrieval.search(query);
      return chunks.map((c) => c.content).join('\n\n') || 'no matching passages';
    }
    const outcome = await context.tools.call(call.name, call.arguments);
    return JSON.stringify(outcome.status === 'success' ? outcome.result : { status: outcome.status, error: outcome.error });
  }
}
