/** Deployment environment, from `APP_ENV`. @public */
export type AppEnv = 'development' | 'staging' | 'production' | 'test';

/**
 * Read-only view of the host configuration (TOML under `config/`, with
 * environment overrides, validated at start). A plugin's own section
 * `[plugins.<id>]` is handed to its `init` already validated; this service is
 * for reading shared sections such as `[timeouts]` or `[mcp]`.
 * @public
 */
export interface ConfigService {
  /** The value of `APP_ENV`. */
  readonly appEnv: AppEnv;
  /** A top-level section, for example `section('timeouts')`; `undefined` when absent. */
  section(name: string): Readonly<Record<string, unknown>> | undefined;
}
