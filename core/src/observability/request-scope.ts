import { AsyncLocalStorage } from 'node:async_hooks';

/** The HTTP request a piece of work runs for. */
export interface RequestScope {
  requestId: string;
}

/**
 * Carries the request id through everything a request does, however deep: the logger adds it to each line and the
 * audit writer to each row, without every function passing it along. Work outside a request has no scope.
 */
const requestScope = new AsyncLocalStorage<RequestScope>();

/** How many requests run in {@link inRequestScope} now. */
let scopedRequests = 0;

/**
 * Runs `work` for request `requestId` in its scope. The scope's storage turns on Node's promise hooks, which every
 * promise of the process then pays for (13 to 15 % of a chat turn's CPU on Node 20), so the storage is switched off
 * again whenever no scoped request is running: work that names its request by hand (a chat turn, which logs through
 * its own logger) and background work then run without the hooks.
 */
export async function inRequestScope<T>(requestId: string, work: () => Promise<T>): Promise<T> {
  scopedRequests += 1;
  try {
    return await requestScope.run({ requestId }, work);
  } finally {
    scopedRequests -= 1;
    // Work a request left running after it ended names it no more, unless another scoped request is running then.
    if (scopedRequests === 0) requestScope.disable();
  }
}

/** The id of the request the caller runs for, if any. */
export const currentRequestId = (): string | undefined => requestScope.getStore()?.requestId;
