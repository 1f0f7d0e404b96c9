import { AsyncLocalStorage } from 'node:async_hooks';

/** The HTTP request a piece of work runs for. */
export interface RequestScope {
  requestId: string;
}

/**
 * Carries the request id through everything a request does, however deep: the logger adds it to each line and the
 * audit writer to each row, without every function passing it along. Work outside a request has no scope.
 */
export const requestScope = new AsyncLocalStorage<RequestScope>();

/** The id of the request the caller runs for, if any. */
export const currentRequestId = (): string | undefined => requestScope.getStore()?.requestId;
