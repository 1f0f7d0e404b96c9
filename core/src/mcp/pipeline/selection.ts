import type { ChatModel } from '@agent-host/sdk';
import type { SelectorDecision } from './gates.js';
import { askStructured } from '../../models/structured-output.js';
import { findTool, type MountedTool } from './toolset.js';
import { isTrackingTool, type TrackingSignals } from '../tracking/tracking.js';

/** Tools and characters of description the AI selector sees (bounded context). */
const MAX_TOOLS = 24;
const MAX_DESCRIPTION = 300;

export type Selection =
  | { kind: 'tool'; tool: MountedTool; source: 'deterministic' | 'ai'; decision: SelectorDecision | null; reason: string; mode: string | null }
  | { kind: 'skip'; source: 'deterministic' | 'ai'; reason: string; mode: string | null };

const SELECTION_SCHEMA = {
  name: 'tool_selection',
  schema: {
    type: 'object',
    properties: {
      selected_tool_name: { type: ['string', 'null'], description: 'the tool to call, or "no_tool"' },
      should_call_now: { type: 'boolean' },
      missing_required_arguments: { type: 'array', items: { type: 'string' } },
      reason: { type: 'string' },
    },
    required: ['selected_tool_name', 'should_call_now', 'missing_required_arguments', 'reason'],
    additionalProperties: false,
  },
};

export interface SelectionInput {
  tools: MountedTool[];
  message: string;
  userHistory: readonly string[];
  tracking: TrackingSignals;
  guidance: string | undefined;
  model: () => ChatModel;
  signal: AbortSignal;
}

/**
 * `mcp-tool-selection-decision`: a tracking signal picks the tracking tool
 * deterministically; when the tracking tool is the only one and there is no
 * signal, the path is skipped without a model call; otherwise the AI selector
 * chooses with bounded context, and anything but an eligible tool is `no_tool`.
 */
export async function selectTool(input: SelectionInput): Promise<Selection> {
  const { tools, tracking } = input;
  const trackingTool = tools.find((t) => isTrackingTool(t.descriptor.name));
  const signal = tracking.intent || tracking.messageIds.length > 0 || tracking.followUp;
  if (trackingTool && signal)
    return { kind: 'tool', tool: trackingTool, source: 'deterministic', decision: null, reason: 'tracking signal in the message', mode: null };
  if (tools.every((t) => isTrackingTool(t.descriptor.name)))
    return { kind: 'skip', source: 'deterministic', reason: 'only the tracking tool is eligible and the message has no tracking signal', mode: null };
  const answer = await askStructured(input.model(), selectionPrompt(input), SELECTION_SCHEMA, input.signal);
  if (!answer.value) return { kind: 'skip', source: 'ai', reason: `no usable selector answer: ${answer.error ?? 'empty'}`, mode: answer.mode };
  const decision = readDecision(answer.value);
  const tool = decision.selected_tool_name === null ? undefined : findTool(tools, decision.selected_tool_name);
  if (!tool) {
    const named =
      decision.selected_tool_name && decision.selected_tool_name !== 'no_tool' ? ` (it named "${decision.selected_tool_name}", which is not eligible)` : '';
    return { kind: 'skip', source: 'ai', reason: `no_tool${named}: ${decision.reason}`, mode: answer.mode };
  }
  return { kind: 'tool', tool, source: 'ai', decision, reason: decision.reason, mode: answer.mode };
}

function readDecision(value: Record<string, unknown>): SelectorDecision {
  const name = typeof value.selected_tool_name === 'string' ? value.selected_tool_name.trim() : '';
  return {
    selected_tool_name: name === '' || name === 'no_tool' ? null : name,
    should_call_now: value.should_call_now !== false,
    missing_required_arguments: Array.isArray(value.missing_required_arguments)
      ? value.missing_required_arguments.filter((v): v is string => typeof v === 'string')
      : [],
    reason: typeof value.reason === 'string' ? value.reason : '',
  };
}

function selectionPrompt(input: SelectionInput) {
  const catalog = input.tools.slice(0, MAX_TOOLS).map((t) => {
    const required = Array.isArray(t.descriptor.input_schema.required) ? t.descriptor.input_schema.required.join(', ') : '';
    return `- ${t.descriptor.name}: ${t.descriptor.description.slice(0, MAX_DESCRIPTION)}${required ? ` (required: ${required})` : ''}`;
  });
  const system = [
    'You decide whether the user message needs one of these tools.',
    catalog.join('\n'),
    'Answer with a JSON object: {"selected_tool_name": <a tool name, or "no_tool">, "should_call_now": <boolean>, "missing_required_arguments": [<required argument names the user has not given>], "reason": <short reason>}.',
    'Small talk and questions the tools do not answer get "no_tool". Never pick a tool just because it is listed first.',
    input.guidance ?? '',
  ].filter(Boolean);
  const history = input.userHistory.length ? `Recent user messages (oldest first):\n${input.userHistory.map((m) => `- ${m}`).join('\n')}\n\n` : '';
  return [
    { role: 'system' as const, content: system.join('\n\n') },
    { role: 'user' as const, content: `${history}Current message:\n${input.message}` },
  ];
}
