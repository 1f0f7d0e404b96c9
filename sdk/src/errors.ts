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

/**
 * Base of every error a plugin or core may throw on purpose. The host turns it
 * into an HTTP response `{"detail": detail}` with `status`; any other error is
 * a 500 whose message is never shown to the caller.
 * @public
 */
export class AgentHostError extends Error {
  /** HTTP status the host answers with. */
  readonly status: number;
  /** The `detail` body: a string, or a structured object for richer clients. */
  readonly detail: unknown;
  constructor(status: number, detail: unknown, options?: { cause?: unknown }) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail), options);
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
  }
}

/** 400: the request is well-formed but not acceptable. @public */
export class BadRequestError extends AgentHostError {
  constructor(detail: unknown) {
    super(400, detail);
  }
}

/** 401: no valid administrator session (or API key). @public */
export class UnauthorizedError extends AgentHostError {
  constructor(detail: unknown = 'authentication required') {
    super(401, detail);
  }
}

/** 403: authenticated, but the permission is missing. @public */
export class ForbiddenError extends AgentHostError {
  constructor(detail: unknown = 'permission denied') {
    super(403, detail);
  }
}

/** 404: the resource does not exist. @public */
export class NotFoundError extends AgentHostError {
  constructor(detail: unknown = 'not found') {
    super(404, detail);
  }
}

/** 409: the resource's state forbids the change. @public */
export class ConflictError extends AgentHostError {
  constructor(detail: unknown) {
    super(409, detail);
  }
}

/** 413: the payload exceeds a configured limit. @public */
export class PayloadTooLargeError extends AgentHostError {
  constructor(detail: unknown) {
    super(413, detail);
  }
}

/** 415: the content type is not supported. @public */
export class UnsupportedMediaTypeError extends AgentHostError {
  constructor(detail: unknown) {
    super(415, detail);
  }
}

/** 422: input failed validation; `detail` is a list of issues. @public */
export class ValidationError extends AgentHostError {
  readonly issues: ValidationIssue[];
  constructor(issues: ValidationIssue[]) {
    super(422, issues);
    this.issues = issues;
  }
}

/** 504: an outbound call (model, tool, service) ran past its timeout. @public */
export class UpstreamTimeoutError extends AgentHostError {
  constructor(detail: unknown) {
    super(504, detail);
  }
}

/** 502: an outbound call failed. @public */
export class UpstreamError extends AgentHostError {
  constructor(detail: unknown, options?: { cause?: unknown }) {
    super(502, detail, options);
  }
}

/**
 * Why the kernel refused to start a plugin.
 * @public
 */
export type PluginRefusalReason =
  | 'sdk_range_mismatch'
  | 'invalid_config'
  | 'duplicate_key'
  | 'missing_dependency'
  | 'init_failed'
  | 'invalid_plugin';

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
