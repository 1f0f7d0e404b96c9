import { databaseUnreachable, publicError } from '@agent-host/core';
import { AgentHostError, defaultErrorCode, type ErrorCode, type ValidationIssue } from '@agent-host/sdk';

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

/** Codes for restify's own refusals, which happen before a route runs. */
const RESTIFY_CODES: Record<string, ErrorCode> = { ResourceNotFoundError: 'ROUTE_NOT_FOUND', MethodNotAllowedError: 'METHOD_NOT_ALLOWED' };

/**
 * Status, envelope and extra headers for an error leaving the host: core's `publicError`, which a turn's stream uses
 * too, plus restify's own refusals.
 */
export function errorEnvelope(
  error: Error & { statusCode?: number },
  request: { id: string; method: string; path: string },
): { status: number; body: ErrorEnvelope; headers: Record<string, string> } {
  // restify's refusals (unknown route, malformed JSON, body too large): their own words, a generic code.
  const status = error.statusCode ?? 500;
  if (!(error instanceof AgentHostError) && status < 500 && !databaseUnreachable(error)) {
    const code = RESTIFY_CODES[error.name] ?? defaultErrorCode(status);
    const detail = code === 'ROUTE_NOT_FOUND' ? `no route for ${request.method} ${request.path}` : error.message;
    return { status, headers: {}, body: { detail, code, message: detail, request_id: request.id } };
  }
  const known = publicError(error);
  return {
    status: known.status,
    headers: known.retryAfterSeconds === undefined ? {} : { 'retry-after': String(known.retryAfterSeconds) },
    body: { detail: known.detail, code: known.code, message: known.message, request_id: request.id, ...(known.issues && { errors: known.issues }) },
  };
}
