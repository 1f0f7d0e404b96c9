/**
 * Start and stop hooks. Start hooks run after every plugin has initialised, in
 * plugin dependency order; stop hooks run in reverse order on shutdown.
 * @public
 */
export interface LifecycleService {
  onStart(hook: () => void | Promise<void>): void;
  onStop(hook: () => void | Promise<void>): void;
}
