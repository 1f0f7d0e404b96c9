import type { IncomingMessage } from 'node:http';
import { ACCESS_COOKIE, readCookie, REFRESH_COOKIE } from './cookies.js';

/**
 * Whether a request carrying the administrator's cookies may change state: a browser sends those cookies with a
 * form or script of any site, so the page it came from must be this host or one of `[server] cors_origins`. Known
 * from `Origin`, else `Sec-Fetch-Site`; a request with neither is not from a browser (curl, SDKs) and passes.
 */
export function crossSiteRefusal(req: IncomingMessage, allowedOrigins: readonly string[]): string | undefined {
  if (!readCookie(req.headers, ACCESS_COOKIE) && !readCookie(req.headers, REFRESH_COOKIE)) return undefined;
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== 'null') {
    if (allowedOrigins.includes(origin)) return undefined;
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    return host !== undefined && host === req.headers.host
      ? undefined
      : `requests from ${origin} may not use this host's administrator session; list the site in [server] cors_origins to allow it`;
  }
  if (origin === 'null') return "requests from an opaque origin may not use this host's administrator session";
  return req.headers['sec-fetch-site'] === 'cross-site' ? "a cross-site request may not use this host's administrator session" : undefined;
}
