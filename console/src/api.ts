import createClient from 'openapi-fetch';
import type { components, paths } from '@agent-host/client';

export type Agent = components['schemas']['Agent'];

/** The host's error body (docs/error-codes.md): `message` is one sentence, `errors` a 422's issues. */
export interface ApiError {
  code: string;
  message: string;
  detail: unknown;
  request_id: string;
  errors?: { loc: (string | number)[]; msg: string; type: string }[];
}

let sessionLost: () => void = () => undefined;

/** Tells the app that the session could not be renewed (for calls made outside `api`, such as an upload). */
export const reportSessionLost = () => sessionLost();

/** Who hears that the session could not be renewed (the app, which goes back to the login page). */
export function onSessionLost(listener: () => void): void {
  sessionLost = listener;
}

let refreshing: Promise<boolean> | undefined;

/** A refresh token is single-use: requests that fail together share one rotation instead of racing each other. */
export function refreshOnce(): Promise<boolean> {
  refreshing ??= fetch('/admin/auth/refresh', { method: 'POST', credentials: 'same-origin' })
    .then(
      (response) => response.ok,
      () => false,
    )
    .finally(() => {
      refreshing = undefined;
    });
  return refreshing;
}

const NOT_RENEWED = new Set(['/admin/auth/login', '/admin/auth/refresh', '/admin/auth/logout']);

/** `fetch` that renews an expired access cookie once and retries, so a session outlives its 15-minute token. */
export async function fetchRenewing(request: Request): Promise<Response> {
  const retry = request.clone();
  const response = await fetch(request);
  if (response.status !== 401 || NOT_RENEWED.has(new URL(request.url).pathname)) return response;
  if (await refreshOnce()) return fetch(retry);
  sessionLost();
  return response;
}

/** The host's API, typed from its own /openapi.json (the @agent-host/client workspace), on the login cookies. */
export const api = createClient<paths>({ baseUrl: window.location.origin, fetch: fetchRenewing });

/** The error of a failed call as the host sent it, or one in the same shape when the answer was not the host's. */
export function asApiError(error: unknown, status: number): ApiError {
  if (error && typeof error === 'object' && 'message' in error && 'code' in error) return error as ApiError;
  return { code: 'UNEXPECTED', message: `the host answered ${status}`, detail: error, request_id: '' };
}

/** Runs one call and gives its data, or throws its ApiError (for TanStack Query, which shows thrown errors). */
export async function expectData<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) throw asApiError(error, response.status);
  return data;
}
