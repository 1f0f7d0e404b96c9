/** Result of one health check. @public */
export interface HealthCheckResult {
  state: 'ok' | 'warning' | 'failed';
  message?: string;
}

/**
 * Health checks reported by `GET /healthz` (`guard_state`, `guard_messages`).
 * @public
 */
export interface HealthService {
  /** Registers a check; `name` is prefixed with the plugin id. */
  register(name: string, check: () => Promise<HealthCheckResult>): void;
}
