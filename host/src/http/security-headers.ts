import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * Headers every response carries: no content sniffing, no referrer, never framed (clickjacking), and HSTS when the
 * host is served over HTTPS (its cookies are `Secure`). Pages set their own stricter CSP on top.
 */
export function setSecurityHeaders(res: ServerResponse, options: { hsts: boolean }): void {
  res.setHeader('x-content-type-options', 'nosniff');
  res.setHeader('referrer-policy', 'no-referrer');
  res.setHeader('x-frame-options', 'DENY');
  res.setHeader('content-security-policy', "frame-ancestors 'none'");
  if (options.hsts) res.setHeader('strict-transport-security', 'max-age=31536000; includeSubDomains');
}

/** CORS for the origins `[server] cors_origins` lists (none by default): credentials allowed, the rest refused. */
export function corsFor(req: IncomingMessage, res: ServerResponse, allowedOrigins: readonly string[]): boolean {
  const origin = req.headers.origin;
  if (typeof origin !== 'string' || !allowedOrigins.includes(origin)) return false;
  res.setHeader('access-control-allow-origin', origin);
  res.setHeader('access-control-allow-credentials', 'true');
  res.setHeader('vary', 'Origin');
  return true;
}
