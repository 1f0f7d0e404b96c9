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

// A registry-wide symbol: every copy of the SDK (a vendor plugin installs its own) brands its errors alike.
const ERROR_KINDS = Symbol.for('@agent-host/sdk.error-kinds');

/**
 * Base of every error a plugin or core may throw on purpose. The host turns it
 * into an HTTP response `{"detail": detail}` with `status`; any other error is
 * a 500 whose message is never shown to the caller.
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
  constructor(status: number, detail: unknown, options?: { cause?: unknown }) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail), options);
    this.name = new.target.name;
    this.status = status;
    this.detail = detail;
    const kinds: string[] = [];
    for (let proto: unknown = new.target; typeof proto === 'function' && proto !== Error; proto = Object.getPrototypeOf(proto)) kinds.push((proto as { name: string }).name);
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
