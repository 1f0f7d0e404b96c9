import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/**
 * One call's time budget: connecting, waiting for a pooled connection and the
 * request itself all draw on it, so `timeout_ms` bounds the whole call.
 */
export class Deadline {
  readonly signal: AbortSignal;
  private readonly timer: AbortSignal;
  private readonly endsAt: number;

  constructor(
    readonly timeoutMs: number,
    callerSignal?: AbortSignal,
  ) {
    this.timer = AbortSignal.timeout(timeoutMs);
    this.signal = callerSignal ? AbortSignal.any([this.timer, callerSignal]) : this.timer;
    this.endsAt = Date.now() + timeoutMs;
  }

  /** Options for an MCP request; the SDK's own 60 s default would otherwise cut longer budgets short. */
  requestOptions(): { signal: AbortSignal; timeout: number } {
    return { signal: this.signal, timeout: Math.max(1, this.endsAt - Date.now()) };
  }

  /** `work`, or a rejection as soon as the budget runs out or the caller aborts. */
  race<T>(work: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(this.reason());
      if (this.signal.aborted) onAbort();
      else this.signal.addEventListener('abort', onAbort, { once: true });
      // Settles `work` either way, so its own late rejection is never unhandled.
      work.then(resolve, reject).finally(() => this.signal.removeEventListener('abort', onAbort));
    });
  }

  /** True when the caller's own signal ended the call before its time ran out. */
  get cancelled(): boolean {
    return this.signal.aborted && !this.timer.aborted;
  }

  /**
   * True when `error` means this call ran out of time: our timer, or the SDK's
   * request timer. The SDK also reports an aborted request as a RequestTimeout,
   * so the caller's own cancellation is told apart first.
   */
  timedOut(error: unknown): boolean {
    if (this.timer.aborted) return true;
    return !this.cancelled && error instanceof McpError && error.code === ErrorCode.RequestTimeout;
  }

  private reason(): Error {
    return new Error(this.timer.aborted ? `timed out after ${this.timeoutMs} ms` : 'cancelled by the caller');
  }
}
