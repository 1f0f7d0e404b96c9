import { sameTool } from '../tracking/tracking.js';

/** The mount allowlist: empty allows every tool the server lists; the tracking tools match each other. */
export const allowedBy = (allowlist: readonly string[], toolName: string) => allowlist.length === 0 || allowlist.some((allowed) => sameTool(allowed, toolName));

/** A value a required argument counts as given with. */
export const hasValue = (value: unknown) => value !== undefined && value !== null && !(typeof value === 'string' && value.trim() === '');

/** The names in `input_schema.required` without a value in `args`. */
export function missingRequired(schema: Readonly<Record<string, unknown>>, args: Record<string, unknown>): string[] {
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  return required.filter((name) => !hasValue(args[name]));
}
