import { ValidationError } from '@agent-host/sdk';
import type { z } from 'zod';

/** Parses a request body with a zod schema; failures are 422 with `{loc, msg, type}` issues. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  throw new ValidationError(
    parsed.error.issues.map((issue) => ({ loc: ['body', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))], msg: issue.message, type: issue.code })),
  );
}
