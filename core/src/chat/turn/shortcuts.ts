import type { MessageType, TurnEvent, TurnResult } from '@agent-host/sdk';
import type { AgentView } from '../../agents/agents.js';
import type { TurnTools } from '../../mcp/pipeline/turn-tools.js';
import { matchFixedResponse } from '../fixed-response.js';
import type { TurnCaller } from './turn-request.js';

/*
 * Stage 3, the shortcuts: replies found without the runtime or a model, side by side and of the runtime's own result
 * type, streamed and stored as any reply is. The pipeline tries the fixed response before the request limits (it is
 * never blocked by them, spec 4.2 rule 6) and quick match after them, once the turn's tools are known.
 */

/** The fixed response for the message's type (spec 4.2 rule 4): chat agents only, and not counted in request limits. */
export function fixedResponse(agent: AgentView | null, messageType: MessageType, message: string): TurnResult | null {
  const reply = agent?.agent_type === 'chat' ? matchFixedResponse(agent.message_type_response_config, messageType, message) : undefined;
  return reply === undefined ? null : { reply, response_source: 'fixed_response', observation: {} };
}

/** The quick-match command (spec 4.13): `POST /stream` only; a WebSocket customer message always goes to the runtime. */
export function quickMatch(tools: TurnTools, channel: TurnCaller['channel']): Promise<TurnResult | null> {
  return channel === 'http' ? tools.quickMatch() : Promise.resolve(null);
}

/** A shortcut's reply as a runtime's events: tokens split after spaces (the shapes of spec 6.1), then its result. */
export async function* shortcutEvents(result: TurnResult): AsyncGenerator<TurnEvent, TurnResult, void> {
  for (const content of result.reply.split(/(?<= )/)) if (content) yield { type: 'token', content };
  return result;
}
