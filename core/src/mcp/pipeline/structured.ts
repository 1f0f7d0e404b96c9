import type { ChatMessage, ChatModel, JsonSchema } from '@agent-host/sdk';

/** What a structured-output call gave: the JSON object, and whether it came as structured output or parsed from text. */
export interface StructuredAnswer {
  value: Record<string, unknown> | null;
  mode: 'structured' | 'json_text';
  error?: string;
}

/** The first JSON object in a text (a fenced block or bare braces), or null. */
export function parseJsonObject(text: string): Record<string, unknown> | null {
  const candidates = [text.trim(), text.match(/```(?:json)?\s*([\s\S]*?)```/)?.[1] ?? '', text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1)];
  for (const candidate of candidates) {
    try {
      const value = JSON.parse(candidate) as unknown;
      if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
    } catch {
      // next candidate
    }
  }
  return null;
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
    // A model that ignores the schema answered in text, which was the JSON-text fallback already.
    return value ? { value, mode: 'structured' } : { value: null, mode: 'json_text', error: 'the answer held no JSON object' };
  } catch (error) {
    if (signal.aborted) throw error;
    structuredError = (error as Error).message;
  }
  try {
    const completion = await model.invoke(messages, { signal });
    const value = parseJsonObject(completion.content);
    return value
      ? { value, mode: 'json_text' }
      : { value: null, mode: 'json_text', error: `no JSON object in the answer (structured output failed: ${structuredError})` };
  } catch (error) {
    if (signal.aborted) throw error;
    return { value: null, mode: 'json_text', error: (error as Error).message };
  }
}
