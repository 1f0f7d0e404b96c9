/** Outcome of an audited action. @public */
export type AuditOutcome = 'success' | 'failure' | 'denied';

/** One audit record. `payload` must not contain secrets. @public */
export interface AuditEvent {
  /** Dotted action name, for example `mcp.server.create`. */
  action: string;
  outcome: AuditOutcome;
  /** Who acted: an administrator id, `system`, or a plugin id. */
  actor_id?: string;
  target_type?: string;
  target_id?: string;
  trace_id?: string;
  payload?: Record<string, unknown>;
}

/**
 * Appends audit records. Core writes a state change and its audit record in
 * one transaction; plugins use this for their own actions.
 * @public
 */
export interface AuditWriter {
  write(event: AuditEvent): Promise<void>;
}
