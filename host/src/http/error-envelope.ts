import { databaseUnreachable } from '@agent-host/core';
import { AgentHostError, defaultErrorCode, TooManyRequestsError, ValidationError, type ErrorCode, type ValidationIssue } from '@agent-host/sdk';

/**
 * The body of every HTTP error. `detail` keeps the shape the spec gives it (a string, the list of a 422, the object of
 * a structured 409); `code` is the stable catalog code clients match on; `message` is one human sentence;
 * `request_id` is the `X-Request-Id` of the response; `errors` lists a 422's issues.
 */
export interface ErrorEnvelope {
  detail: unknown;
  code: ErrorCode;
  message: string;
  request_id: string;
  errors?: ValidationIssue[];
}

/** How long a client waits before retrying while the database is away: about what the supervisor needs to restart it. */
const DATABASE_RETRY_SECONDS = 5;

/** Codes for restify's own refusals, which happen before a route runs. */
const RESTIFY_CODES: Record<string, ErrorCode> = { ResourceNotFoundError: 'ROUTE_NOT_FOUND', MethodNotAllowedError: 'METHOD_NOT_ALLOWED' };

const summary = (issues: readonly ValidationIssue[]) =>
  `the request failed validation: ${issues
    .slice(0, 3)
    .map((issue) => `${issue.loc.join('.')} ${issue.msg}`)
    .join('; ')}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}`;

/**
 * Status, envelope and extra headers for an error leaving the host. Errors the host or a plugin raise on purpose say
 * what they are; an unexpected error is a 500 whose message stays in the log.
 */
export function errorEnvelope(
  error: Error & { statusCode?: number },
  request: { id: string; method: string; path: string },
): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  if (error instanceof AgentHostError) {
    if (error instanceof TooManyRequestsError) headers['retry-after'] = String(error.retryAfterSeconds);
    const issues = error instanceof ValidationError ? error.issues : undefined;
    const message = issues ? summary(issues) : typeof error.detail === 'string' ? error.detail : error.message;
    return {
      status: error.status,
      headers,
      body: { detail: error.detail, code: error.code, message, request_id: request.id, ...(issues && { errors: issues }) },
    };
  }
  // Not a bug of the request or the host: the database is away, the request changed nothing, and a retry will do.
  if (databaseUnreachable(error)) {
    const detail = 'the database does not answer; nothing was changed, try again shortly';
    return {
      status: 503,
      headers: { 'retry-after': String(DATABASE_RETRY_SECONDS) },
      body: { detail, code: 'DATABASE_UNAVAILABLE', message: detail, request_id: request.id },
    };
  }
  const status = error.statusCode ?? 500;
  if (status >= 500)
    return { status, headers, body: { detail: 'internal server error', code: 'INTERNAL_ERROR', message: 'internal server error', request_id: request.id } };
  // restify's refusals (unknown route, malformed JSON, body too large): their own words, a generic code.
  const code = RESTIFY_CODES[error.name] ?? defaultErrorCode(status);
  const detail = code === 'ROUTE_NOT_FOUND' ? `no route for ${request.method} ${request.path}` : error.message;
  return { status, headers, body: { detail, code, message: detail, request_id: request.id } };
}
