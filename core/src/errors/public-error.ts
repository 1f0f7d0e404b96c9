import { AgentHostError, TooManyRequestsError, ValidationError, type ErrorCode, type ValidationIssue } from '@agent-host/sdk';
import { databaseUnreachable } from './database-unreachable.js';

/**
 * What a caller is told about an error, whether it ends an HTTP request or a turn's stream: errors the host or a
 * plugin raise on purpose say what they are; an unexpected error says only that it happened (its text goes to the
 * log, never to the caller).
 */
export interface PublicError {
  status: number;
  code: ErrorCode;
  /** The `detail` of the spec: a string, a 422's issues, or a structured 409's object. */
  detail: unknown;
  /** One sentence for a person. */
  message: string;
  issues?: ValidationIssue[];
  retryAfterSeconds?: number;
  /** Raised on purpose (an `AgentHostError`), as opposed to a fault the log must keep. */
  deliberate: boolean;
}

/** How long a client waits before retrying while the database is away: about what the supervisor needs to restart it. */
const DATABASE_RETRY_SECONDS = 5;

export const INTERNAL_ERROR_MESSAGE = 'internal server error';

const summary = (issues: readonly ValidationIssue[]) =>
  `the request failed validation: ${issues
    .slice(0, 3)
    .map((issue) => `${issue.loc.join('.')} ${issue.msg}`)
    .join('; ')}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}`;

export function publicError(error: unknown): PublicError {
  if (error instanceof AgentHostError) {
    const issues = error instanceof ValidationError ? error.issues : undefined;
    return {
      status: error.status,
      code: error.code,
      detail: error.detail,
      message: issues ? summary(issues) : typeof error.detail === 'string' ? error.detail : error.message,
      ...(issues && { issues }),
      ...(error instanceof TooManyRequestsError && { retryAfterSeconds: error.retryAfterSeconds }),
      deliberate: true,
    };
  }
  // Not a bug of the request or the host: the database is away, nothing was changed, and a retry will do.
  if (databaseUnreachable(error)) {
    const detail = 'the database does not answer; nothing was changed, try again shortly';
    return { status: 503, code: 'DATABASE_UNAVAILABLE', detail, message: detail, retryAfterSeconds: DATABASE_RETRY_SECONDS, deliberate: false };
  }
  return { status: 500, code: 'INTERNAL_ERROR', detail: INTERNAL_ERROR_MESSAGE, message: INTERNAL_ERROR_MESSAGE, deliberate: false };
}
