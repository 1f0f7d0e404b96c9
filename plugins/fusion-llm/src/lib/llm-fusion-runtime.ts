import {
  FUSION_OUTPUT_SCHEMA_NAME,
  fusionOutputSchema,
  type ChatMessage,
  type FusionDefinition,
  type FusionInput,
  type FusionOutputItem,
  type FusionRunContext,
  type FusionRunRequest,
  type FusionRunResult,
  type FusionRuntime,
} from '@agent-host/sdk';

/**
 * `fusion_llm`: one model call per run. The system message holds the instructions and what each output must be; the
 * user message holds every input by slot name (files as their text); the model is asked for one JSON object with a
 * property per output slot (structured output), which is split into the run's outputs. A repair attempt replays the
 * refused answer and the host's errors.
 */
export class LlmFusionRuntime implements FusionRuntime {
  constructor(private readonly maxInputCharacters: number) {}

  async execute(request: FusionRunRequest, context: FusionRunContext): Promise<FusionRunResult> {
    context.signal.throwIfAborted();
    const { definition } = request;
    const messages: ChatMessage[] = [
      { role: 'system', content: systemPrompt(definition) },
      { role: 'user', content: await this.inputsText(request.inputs) },
    ];
    if (request.repair) {
      messages.push(
        { role: 'assistant', content: JSON.stringify(Object.fromEntries(request.repair.output_item_list.map((i) => [i.slot, i.json_value]))) },
        {
          role: 'user',
          content: `That answer was refused:\n${request.repair.errors.map((e) => `- ${e}`).join('\n')}\nAnswer again with the corrected JSON object.`,
        },
      );
    }
    let raw = '';
    for await (const chunk of context.model.stream(messages, {
      signal: context.signal,
      responseSchema: { name: FUSION_OUTPUT_SCHEMA_NAME, schema: fusionOutputSchema(definition) },
    })) {
      if (chunk.type === 'token') raw += chunk.content;
    }
    return { output_item_list: outputsOf(definition, raw), prompt_messages: messages, model_raw_response: raw };
  }

  private async inputsText(inputs: FusionInput[]): Promise<string> {
    const parts: string[] = [];
    for (const input of inputs) {
      const text = input.kind === 'text' ? input.text : await input.text();
      if (text.length > this.maxInputCharacters) {
        throw new Error(
          `input "${input.slot}" has ${text.length} characters; fusion_llm sends at most ${this.maxInputCharacters} (plugins.fusion-llm.max_input_characters)`,
        );
      }
      const label = input.kind === 'text' ? input.slot : `${input.slot} (file "${input.filename}", ${input.content_type})`;
      parts.push(`## ${label}\n${text}`);
    }
    return parts.join('\n\n');
  }
}

function systemPrompt(definition: FusionDefinition): string {
  const outputs = definition.output_slots.map((slot) => {
    const what = slot.kind === 'text' ? 'a string' : 'JSON matching its schema';
    const lines = [`- "${slot.name}": ${what}${slot.description ? `. ${slot.description}` : ''}`];
    if (slot.output_instruction_fragment) lines.push(`  ${slot.output_instruction_fragment}`);
    return lines.join('\n');
  });
  return [
    definition.instructions.trim(),
    'Answer with one JSON object and nothing else. Its properties:',
    ...outputs,
    'The inputs follow in the user message, each under its name.',
  ]
    .filter(Boolean)
    .join('\n');
}

/** The model's object split into one item per output slot; an answer that does not parse is every slot's raw value. */
function outputsOf(definition: FusionDefinition, raw: string): FusionOutputItem[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const object = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  return definition.output_slots.map((slot) => ({
    slot: slot.name,
    kind: slot.kind,
    json_value: object ? (object[slot.name] ?? null) : raw,
  }));
}
