import type { ChatMessage, ChatModel, JsonSchema } from '@agent-host/sdk';
import { parseJsonObject } from './json-object.js';

/** What a structured-output call gave: the JSON object, and whether it came as structured output or parsed from text. */
export interface StructuredAnswer {
  value: Record<string, unknown> | null;
  mode: 'structured' | 'json_text';
  error?: string;
  /** The text of the reply that was parsed (absent when no call answered). */
  text?: string;
}

/**
 * Asks for one JSON object matching `schema`, by structured output first; a
 * model that refuses structured output is asked again for JSON text, which is
 * parsed. A cancelled turn rethrows; other failures answer `value: null`.
 */
export async function askStructured(
  model: ChatModel,
  messages: ChatMessage[],
  schema: { name: string; schema: JsonSchema },
  signal: AbortSignal,
): Promise<StructuredAnswer> {
  let structuredError: string;
  try {
    const completion = await model.invoke(messages, { signal, responseSchema: schema });
    const value = parseJsonObject(completion.content);
    const text = completion.content;
    // A model that ignores the schema answered in text, which was the JSON-text fallback already.
    return value ? { value, mode: 'structured', text } : { value: null, mode: 'json_text', error: 'the answer held no JSON object', text };
  } catch (error) {
    if (signal.aborted) throw error;
    structuredError = (error as Error).message;
  }
  try {
    const completion = await model.invoke(messages, { signal });
    const value = parseJsonObject(completion.content);
    const text = completion.content;
    return value
      ? { value, mode: 'json_text', text }
      : { value: null, mode: 'json_text', error: `no JSON object in the answer (structured output failed: ${structuredError})`, text };
  } catch (error) {
    if (signal.aborted) throw error;
    return { value: null, mode: 'json_text', error: (error as Error).message };
  }
}
