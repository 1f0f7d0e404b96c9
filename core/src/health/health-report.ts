import type { HealthCheckResult } from '@agent-host/sdk';

export interface HealthReport {
  status: 'ok';
  app_env: string;
  app_instance: string;
  database_fingerprint: string;
  guard_mode: 'enforce' | 'warn';
  guard_state: 'ok' | 'warning' | 'failed';
  guard_messages: string[];
}

/**
 * `GET /healthz` (spec 4.1). `status` is always `ok` (the process answers);
 * `guard_state` is the worst of the static guards and the live checks.
 * `guard_mode` is `enforce` in production, where failing guards refuse
 * start-up, and `warn` elsewhere.
 */
export function buildHealthReport(input: {
  appEnv: string;
  instanceId: string;
  databaseFingerprint: string;
  staticWarnings: string[];
  checks: { name: string; result: HealthCheckResult }[];
}): HealthReport {
  const messages = input.staticWarnings.map((m) => `warning: ${m}`);
  let state: HealthReport['guard_state'] = input.staticWarnings.length ? 'warning' : 'ok';
  for (const { name, result } of input.checks) {
    if (result.state === 'ok') continue;
    messages.push(`${result.state}: ${name}${result.message ? `: ${result.message}` : ''}`);
    if (result.state === 'failed') state = 'failed';
    else if (state === 'ok') state = 'warning';
  }
  return {
    status: 'ok',
    app_env: input.appEnv,
    app_instance: input.instanceId,
    database_fingerprint: input.databaseFingerprint,
    guard_mode: input.appEnv === 'production' ? 'enforce' : 'warn',
    guard_state: state,
    guard_messages: messages,
  };
}
