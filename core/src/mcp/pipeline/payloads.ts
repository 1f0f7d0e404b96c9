import { isTrackingTool } from '../tracking/tracking.js';

/** The failure minimum raw JSON of spec 4.13. */
export const failurePayload = (serverName: string, toolName: string, errorMessage: string) => ({
  server_name: serverName,
  tool_name: toolName,
  status: 'error' as const,
  error_message: errorMessage,
});

const isObject = (value: unknown): value is Record<string, unknown> => !!value && typeof value === 'object' && !Array.isArray(value);

/**
 * The business payload: the raw payload with its `response` wrapper removed.
 * A tracking result keeps `selectNo` from the top level (the number queried).
 */
export function businessPayload(raw: unknown, toolName: string): unknown {
  if (!isObject(raw) || !isObject(raw.response)) return raw;
  return isTrackingTool(toolName) && raw.selectNo !== undefined ? { ...raw.response, selectNo: raw.selectNo } : raw.response;
}

/** The values at a dotted path; an array on the way is stepped into element by element. */
export function valuesAt(value: unknown, path: string): unknown[] {
  let current: unknown[] = [value];
  for (const segment of path.split('.').filter(Boolean)) {
    current = current.flatMap((v) => {
      if (Array.isArray(v))
        return /^\d+$/.test(segment)
          ? v[Number(segment)] === undefined
            ? []
            : [v[Number(segment)]]
          : v.flatMap((item) => (isObject(item) && segment in item ? [item[segment]] : []));
      return isObject(v) && segment in v ? [v[segment]] : [];
    });
  }
  return current;
}

const isEmpty = (v: unknown) =>
  v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/** One entry per leaf path of a payload, arrays stepped into (`tracking.trackingSub.currentStatus`), for choosing `selected_fields`. */
export function fieldCatalog(payload: unknown, limit = 200): { path: string; type: string; example: unknown }[] {
  const seen = new Map<string, { path: string; type: string; example: unknown }>();
  const walk = (value: unknown, path: string) => {
    if (seen.size >= limit) return;
    if (Array.isArray(value)) {
      if (value.every((v) => !isObject(v) && !Array.isArray(v)))
        return void (path && !seen.has(path) && seen.set(path, { path, type: 'array', example: value.slice(0, 3) }));
      for (const item of value) walk(item, path);
      return;
    }
    if (isObject(value)) {
      for (const [key, inner] of Object.entries(value)) walk(inner, path ? `${path}.${key}` : key);
      return;
    }
    if (path && !seen.has(path)) seen.set(path, { path, type: value === null ? 'null' : typeof value, example: value });
  };
  walk(payload, '');
  return [...seen.values()];
}

/**
 * A tool result as a runtime gets it: as it is while its text (JSON unless a string) fits `maxChars`, else that text
 * cut to `maxChars` with a note saying so, so one large answer cannot fill the model's context.
 */
export function resultForContext(value: unknown, maxChars: number): unknown {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text === undefined || text.length <= maxChars) return value;
  return `${text.slice(0, maxChars)}\n[cut: the tool answered ${text.length} characters; the first ${maxChars} are shown ([mcp] result_context_chars)]`;
}

/** JSON text, in a ```json fenced block when asked. */
export const jsonOutput = (value: unknown, wrap: boolean) => {
  const text = JSON.stringify(value, null, 2);
  return wrap ? `\`\`\`json\n${text}\n\`\`\`` : text;
};

const textOf = (value: unknown): string => {
  if (Array.isArray(value)) return value.map(textOf).join(', ');
  return typeof value === 'string' ? value : JSON.stringify(value);
};

export interface RenderRule {
  output_mode: 'raw_json' | 'json_subset' | 'text';
  selected_fields: readonly string[];
  prefix_text: string;
  suffix_text: string;
  wrap_json_code_block: boolean;
}

/**
 * Renders a business payload by a direct-response rule. `json_subset` and
 * `text` fall back to raw JSON when every selected field is missing or empty.
 */
export function renderDirectResponse(payload: unknown, rule: RenderRule): { reply: string; fallback: boolean } {
  if (rule.output_mode === 'raw_json') return { reply: jsonOutput(payload, rule.wrap_json_code_block), fallback: false };
  const fields = rule.selected_fields.map((path) => {
    const values = valuesAt(payload, path).filter((v) => !isEmpty(v));
    return { path, value: values.length === 0 ? undefined : values.length === 1 ? values[0] : values };
  });
  const present = fields.filter((f) => f.value !== undefined);
  if (present.length === 0) return { reply: jsonOutput(payload, rule.wrap_json_code_block), fallback: true };
  if (rule.output_mode === 'json_subset')
    return { reply: jsonOutput(Object.fromEntries(present.map((f) => [f.path, f.value])), rule.wrap_json_code_block), fallback: false };
  const lines = present.map((f) => `${f.path.split('.').at(-1)}: ${textOf(f.value)}`);
  return { reply: [rule.prefix_text, ...lines, rule.suffix_text].filter((part) => part.trim() !== '').join('\n'), fallback: false };
}
