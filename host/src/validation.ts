import { validate, ValidationError } from '@agent-host/sdk';
import { z } from 'zod';

/** Where `value` holds a NUL character (in a string or a key), which no Postgres text or jsonb value can store. */
function nulAt(value: unknown, loc: (string | number)[]): (string | number)[] | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? loc : undefined;
  if (value === null || typeof value !== 'object') return undefined;
  for (const [key, inner] of Object.entries(value)) {
    const at = key.includes('\u0000') ? [...loc, key] : nulAt(inner, [...loc, Array.isArray(value) ? Number(key) : key]);
    if (at) return at;
  }
  return undefined;
}

/** Validates with `schema` under `loc`, refusing a NUL character anywhere first: it would reach the database as a 500. */
function parse<S extends z.ZodType>(schema: S, value: unknown, loc: 'body' | 'query'): z.output<S> {
  const at = nulAt(value, [loc]);
  if (at) throw new ValidationError([{ loc: at, msg: 'must not contain the NUL character (\\u0000)', type: 'nul_character' }]);
  return validate(schema, value ?? {}, [loc]);
}

/** Parses a request body with a zod schema; failures are 422 with `{loc, msg, type}` issues. */
export const parseBody = <S extends z.ZodType>(schema: S, body: unknown): z.output<S> => parse(schema, body, 'body');

/** Parses query parameters the same way (`loc` starts with `query`). */
export const parseQuery = <S extends z.ZodType>(schema: S, query: unknown): z.output<S> => parse(schema, query, 'query');

/** A page of a list endpoint: `{items, next_cursor, limit}`; `next_cursor` is null on the last page. */
export const pageOf = <S extends z.ZodType>(item: S) => z.object({ items: z.array(item), next_cursor: z.string().nullable(), limit: z.number().int() });

/** The paging of every list endpoint: `limit` 1 to 200 (default 50) and an opaque `cursor`. */
export const pagingFields = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().optional(),
};

/** A moment as the API writes it: ISO 8601 in UTC. */
export const timestamp = z.string().datetime();

/** A list answered whole: `{items}`. */
export const listOf = <S extends z.ZodType>(item: S) => z.object({ items: z.array(item) });

/** The answer of an action that returns no resource: `{"status": "deleted"}` and the like. */
export const statusOf = <const T extends string>(status: T) => z.object({ status: z.literal(status) });

/** `?wait_seconds=`: how long a route that makes a run waits for it to end before answering (0: at once, at most 300). */
export const runWait = (limit: string) =>
  z
    .object({
      wait_seconds: z.coerce
        .number()
        .int()
        .min(0)
        .max(300)
        .optional()
        .describe(`How long to wait for the run to end before answering (0: answer at once); ${limit}`),
    })
    .strict();
