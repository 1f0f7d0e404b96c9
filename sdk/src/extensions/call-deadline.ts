/**
 * One deadline for a whole outbound call, joined with the caller's signal: `signal` aborts at whichever comes first.
 * It is a plain `AbortController`'s signal, not `AbortSignal.any`: on Node 20 a composite signal that a client library
 * adds an abort listener to, and that never aborts, stays alive for good with all the listener holds (a host leaked
 * about 8 KiB a chat turn that way). Call `dispose` when the call is over.
 * @public
 */
export interface CallDeadline {
  readonly signal: AbortSignal;
  /** Whether the deadline, not the caller, stopped the call. */
  readonly timedOut: boolean;
  /** Clears the timer and stops listening to the caller's signal. */
  dispose(): void;
}

/** A {@link CallDeadline} of `timeoutMs` for a call made for `caller`. @public */
export function callDeadline(timeoutMs: number, caller?: AbortSignal): CallDeadline {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`the call took longer than ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  timer.unref?.();
  const onAbort = () => controller.abort(caller?.reason);
  if (caller?.aborted) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    get timedOut() {
      return timedOut;
    },
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}
