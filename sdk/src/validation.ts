import type { z } from 'zod';
import { ValidationError, type ValidationIssue } from './errors.js';

/** The kinds a value may be, as a person says them. */
const KIND_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  date: 'a date',
  bigint: 'an integer',
  null: 'null',
};

const kindOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'a list' : (KIND_NAMES[typeof value] ?? typeof value));

const bound = (issue: { origin?: string; inclusive?: boolean }, limit: number | bigint | Date, most: boolean) => {
  const exact = issue.inclusive === false ? (most ? 'less than' : 'more than') : most ? 'at most' : 'at least';
  switch (issue.origin) {
    case 'string':
      return `must be ${exact} ${limit} characters long`;
    case 'array':
    case 'set':
      return `must have ${exact} ${limit} items`;
    case 'file':
      return `must be ${exact} ${limit} bytes`;
    default:
      return `must be ${exact} ${limit}`;
  }
};

/**
 * The host's own words for a zod issue: a client (and a person reading the console) sees "is required" or "must be
 * one of a, b", never the validator's default text. A message a schema sets itself wins over these.
 */
function issueMessage(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'is required' : `must be ${KIND_NAMES[issue.expected] ?? issue.expected}, not ${kindOf(issue.input)}`;
    case 'too_big':
      return bound(issue, issue.maximum, true);
    case 'too_small':
      return bound(issue, issue.minimum, false);
    case 'invalid_value':
      return issue.values.length === 1
        ? `must be ${JSON.stringify(issue.values[0])}`
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format':
      return issue.format === 'regex' && 'pattern' in issue ? `must match the pattern ${issue.pattern}` : `must be a valid ${issue.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_union':
      return 'matches none of the accepted forms';
    case 'invalid_key':
      return 'has an invalid key';
    case 'invalid_element':
      return 'has an invalid entry';
    default:
      return 'is not valid';
  }
}

/** `type` of an issue: zod's code, but `missing` for a required value that is absent (as FastAPI says it). */
const issueType = (issue: z.core.$ZodIssue, input: unknown) => (issue.code === 'invalid_type' && input === undefined ? 'missing' : issue.code);

/** The value at `path` of `root`, to tell a missing field from a wrong one. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value = root;
  for (const key of path) value = value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined;
  return value;
}

/**
 * Validates `value` with `schema`: the parsed value, or the issues with `loc` starting at `loc`, a `type` and the
 * host's own `msg` ("is required", "must be one of a, b"; a message the schema sets itself wins).
 * @public
 */
export function safeValidate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  loc: readonly (string | number)[] = [],
): { success: true; data: z.output<S> } | { success: false; issues: ValidationIssue[] } {
  const parsed = schema.safeParse(value, { error: issueMessage });
  if (parsed.success) return { success: true, data: parsed.data };
  return {
    success: false,
    issues: parsed.error.issues.map((issue) => ({
      loc: [...loc, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
      msg: issue.message,
      type: issueType(issue, valueAt(value, issue.path)),
    })),
  };
}

/**
 * Validates `value` with `schema` like the host validates requests: the parsed value, or a `ValidationError` (422)
 * whose issues are those of `safeValidate`.
 * @public
 */
export function validate<S extends z.ZodType>(schema: S, value: unknown, loc: readonly (string | number)[] = []): z.output<S> {
  const result = safeValidate(schema, value, loc);
  if (result.success) return result.data;
  throw new ValidationError(result.issues);
}
