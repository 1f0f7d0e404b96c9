import type { IssuedTokens } from '@agent-host/core';
import { parse, serialize, type SerializeOptions } from 'cookie';
import type { IncomingHttpHeaders } from 'node:http';
import type { Response } from 'restify';

export const ACCESS_COOKIE = 'agent_host_access';
export const REFRESH_COOKIE = 'agent_host_refresh';
/** The refresh cookie is only sent to the endpoints that consume it. */
const REFRESH_PATH = '/admin/auth';

/** A cookie of an HTTP request or a WebSocket handshake. */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  return headers.cookie ? parse(headers.cookie)[name] : undefined;
}

function base(secure: boolean): SerializeOptions {
  return { httpOnly: true, sameSite: 'lax', secure };
}

/** HttpOnly, SameSite=Lax, Secure when configured: clients never handle the tokens. */
export function setSessionCookies(res: Response, tokens: IssuedTokens, secure: boolean): void {
  res.header('Set-Cookie', [
    serialize(ACCESS_COOKIE, tokens.accessToken, { ...base(secure), path: '/', maxAge: tokens.accessMaxAgeSeconds }),
    serialize(REFRESH_COOKIE, tokens.refreshToken, { ...base(secure), path: REFRESH_PATH, maxAge: tokens.refreshMaxAgeSeconds }),
  ]);
}

export function clearSessionCookies(res: Response, secure: boolean): void {
  res.header('Set-Cookie', [
    serialize(ACCESS_COOKIE, '', { ...base(secure), path: '/', maxAge: 0 }),
    serialize(REFRESH_COOKIE, '', { ...base(secure), path: REFRESH_PATH, maxAge: 0 }),
  ]);
}
