import type { HealthCheckResult, HealthService } from '@agent-host/sdk';

type Check = () => Promise<HealthCheckResult>;

/** Every health check of core and plugins, run together by `/healthz`; the required ones also by `/readyz`. */
export class HealthRegistry {
  private readonly checks = new Map<string, Check>();
  private readonly required = new Set<string>();

  /** `required`: the host cannot serve without it, so `/readyz` fails while it does. */
  add(name: string, check: Check, options: { required?: boolean } = {}): void {
    this.checks.set(name, check);
    if (options.required) this.required.add(name);
  }

  /** The view a plugin gets: names are prefixed with its id. */
  forOwner(owner: string): HealthService {
    return { register: (name, check) => this.add(`${owner}.${name}`, check) };
  }

  /** Runs all checks (or only the required ones) concurrently, each bounded by `timeoutMs`. */
  async run(timeoutMs: number, only: 'all' | 'required' = 'all'): Promise<{ name: string; result: HealthCheckResult }[]> {
    return Promise.all(
      [...this.checks]
        .filter(([name]) => only === 'all' || this.required.has(name))
        .map(async ([name, check]) => {
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<HealthCheckResult>((resolve) => {
            timer = setTimeout(() => resolve({ state: 'failed', message: `health check timed out after ${timeoutMs} ms` }), timeoutMs);
          });
          try {
            return { name, result: await Promise.race([check(), timeout]) };
          } catch (error) {
            return { name, result: { state: 'failed' as const, message: (error as Error).message } };
          } finally {
            clearTimeout(timer);
          }
        }),
    );
  }
}
