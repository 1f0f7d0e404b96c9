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
