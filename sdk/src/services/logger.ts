/**
 * Structured logger (pino-compatible). Each plugin gets a child bound to
 * `plugin=<id>`. Never log secrets.
 * @public
 */
export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Record<string, unknown>): Logger;
}
