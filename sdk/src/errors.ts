/**
 * One entry of a 422 validation failure, as served in `{"detail": [...]}`.
 * @public
 */
export interface ValidationIssue {
  /** Path to the offending value, for example `["body", "agent_id"]`. */
  loc: (string | number)[];
  /** Human-readable message. */
  msg: string;
  /** Machine-readable kind, for example `missing` or `too_big`. */
  type: string;
}

import type { ErrorCode } from './error-codes.js';

/**
 * What an error may say besides its detail: a catalog `code` more specific than its class's default, and its cause.
 * @public
 */
export interface AgentHostErrorOptions {
  code?: ErrorCode;
  cause?: unknown;
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'LOGIN_REQUIRED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'VALIDATION_FAILED',
  429: 'RATE_LIMITED',
  502: 'UPSTREAM_FAILED',
  503: 'SERVICE_UNAVAILABLE',
  504: 'UPSTREAM_TIMEOUT',
};

/**
 * The generic code of an HTTP status, for errors that name no code of their own.
 * @public
 */
export const defaultErrorCode = (status: number): ErrorCode => CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST');

// A registry-wide symbol: every copy of the SDK (a vendor plugin installs its own) brands its errors alike.
const ERROR_KINDS = Symbol.for('@agent-host/sdk.error-kinds');

/**
 * Base of every error a plugin or core may throw on purpose. The host turns it
 * into an HTTP response `{"detail": detail, "code": code, ...}` with `status`;
 * any other error is a 500 whose message is never shown to the caller.
 *
 * `instanceof` works across copies of the SDK: an out-of-tree plugin's
 * `NotFoundError` is a `NotFoundError` to the host, matched by class name.
 * @public
 */
export class AgentHostError extends Error {
  /** HTTP status the host answers with. */
  readonly status: number;
  /** The `detail` body: a string, or a structured object for richer clients. */
  readonly detail: unknown;
  /** The stable code of the catalog (`ERROR_CODES`) clients match on. */
  readonly code: ErrorCode;
  constructor(status: number, detail: unknown, options: AgentHostErrorOptions = {}) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
    this.code = options.code ?? defaultErrorCode(status);
    const kinds: string[] = [];
    for (let proto: unknown = new.target; typeof proto === 'function' && proto !== Error; proto = Object.getPrototypeOf(proto))
      kinds.push((proto as { name: string }).name);
    Object.defineProperty(this, ERROR_KINDS, { value: kinds });
  }

  /** True for an error made by this class or a subclass in any copy of the SDK. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    const kinds = (value as { [ERROR_KINDS]?: unknown } | null)?.[ERROR_KINDS];
    return Array.isArray(kinds) && kinds.includes(this.name);
  }
}

/** 400: the request is well-formed but not acceptable. @public */
export class BadRequestError extends AgentHostError {
  constructor(detail: unknown, options?: AgentHostErrorOptions) {
    super(400, detail, options);
  }
}

/** 401: no valid administrator session (or API key). @public */
export class UnauthorizedError extends AgentHostError {
  constructor(detail: unknown = 'authentication required', options?: AgentHostErrorOptions) {
    super(401, detail, options);
  }
}

/** 403: authenticated, but the permission is missing. @public */
export class ForbiddenError extends AgentHostError {
  constructor(detail: unknown = 'permission denied', options?: AgentHostErrorOptions) {
    super(403, detail, options);
  }
}

/** 404: the resource does not exist. @public */
export class NotFoundError extends AgentHostError {
  constructor(detail: unknown = 'not found', options?: AgentHostErrorOptions) {
    super(404, detail, options);
  }
}

/** 409: the resource's state forbids the change. @public */
export class ConflictError extends AgentHostError {
  constructor(detail: unknown, options?: AgentHostErrorOptions) {
    super(409, detail, options);
  }
}

/** 413: the payload exceeds a configured limit. @public */
export class PayloadTooLargeError extends AgentHostError {
  constructor(detail: unknown, options?: AgentHostErrorOptions) {
    super(413, detail, options);
  }
}

/** 415: the content type is not supported. @public */
export class UnsupportedMediaTypeError extends AgentHostError {
  constructor(detail: unknown, options?: AgentHostErrorOptions) {
    super(415, detail, options);
  }
}

/** 422: input failed validation; `detail` is a list of issues. @public */
export class ValidationError extends AgentHostError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[], options?: AgentHostErrorOptions) {
    super(422, issues, options);
    this.issues = issues;
  }
}

/** 429: a rate limit was reached; the host sends `retryAfterSeconds` as `Retry-After`. @public */
export class TooManyRequestsError extends AgentHostError {
  readonly retryAfterSeconds: number;
  constructor(detail: unknown, retryAfterSeconds: number, options?: AgentHostErrorOptions) {
    super(429, detail, options);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** 503: the host is at capacity for this kind of request; a retry shortly may succeed. @public */
export class ServiceUnavailableError extends AgentHostError {
  constructor(detail: unknown, options?: AgentHostErrorOptions) {
    super(503, detail, options);
  }
}

/** 504: an outbound call (model, tool, service) ran past its timeout. @public */
export class UpstreamTimeoutError extends AgentHostError {
  constructor(detail: unknown, options?: AgentHostErrorOptions) {
    super(504, detail, options);
  }
}

/** 502: an outbound call failed. @public */
export class UpstreamError extends AgentHostError {
  constructor(detail: unknown, options?: AgentHostErrorOptions) {
    super(502, detail, options);
  }
}

/**
 * Why the kernel refused to start a plugin.
 * @public
 */
export type PluginRefusalReason = 'sdk_range_mismatch' | 'invalid_config' | 'duplicate_key' | 'missing_dependency' | 'init_failed' | 'invalid_plugin';

/**
 * Start-up refusal: names the plugin and the reason in one message.
 * @public
 */
export class PluginRefusedError extends Error {
  readonly pluginId: string;
  readonly reason: PluginRefusalReason;
  constructor(pluginId: string, reason: PluginRefusalReason, message: string, options?: { cause?: unknown }) {
    super(`plugin "${pluginId}" refused (${reason}): ${message}`, options);
    this.name = 'PluginRefusedError';
    this.pluginId = pluginId;
    this.reason = reason;
  }
}
