import { ValidationError } from '@agent-host/sdk';
import { z } from 'zod';

function parseAt<S extends z.ZodType>(where: 'body' | 'query', schema: S, value: unknown): z.output<S> {
  const parsed = schema.safeParse(value ?? {});
  if (parsed.success) return parsed.data;
  throw new ValidationError(
    parsed.error.issues.map((issue) => ({ loc: [where, ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], msg: issue.message, type: issue.code })),
  );
}

/** Parses a request body with a zod schema; failures are 422 with `{loc, msg, type}` issues. */
export const parseBody = <S extends z.ZodType>(schema: S, body: unknown): z.output<S> => parseAt('body', schema, body);

/** Parses query parameters the same way (`loc` starts with `query`). */
export const parseQuery = <S extends z.ZodType>(schema: S, query: unknown): z.output<S> => parseAt('query', schema, query);

/** The paging of every list endpoint: `limit` 1 to 200 (default 50) and an opaque `cursor`. */
export const pagingFields = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().optional(),
};
