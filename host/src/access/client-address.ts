import type { IncomingMessage } from 'node:http';
import proxyaddr from 'proxy-addr';

/**
 * Reads the client's address: the socket's own, or, when the socket is one of `[server] trusted_proxies`, the
 * nearest untrusted address of `X-Forwarded-For`. Anything else could name itself in that header and so escape
 * per-address limits, or pin them on someone else.
 */
export function clientAddressReader(trustedProxies: readonly string[]): (req: IncomingMessage) => string | null {
  if (trustedProxies.length === 0) return (req) => req.socket?.remoteAddress ?? null;
  const trust = proxyaddr.compile([...trustedProxies]);
  return (req) => (req.socket?.remoteAddress ? proxyaddr(req, trust) : null);
}

const addresses = new WeakMap<IncomingMessage, string | null>();

/** Records a request's client address once, when it arrives, for everything that later reads {@link clientAddressOf}. */
export function rememberClientAddress(req: IncomingMessage, address: string | null): void {
  addresses.set(req, address);
}

export function clientAddressOf(req: IncomingMessage): string | null {
  return addresses.has(req) ? addresses.get(req)! : (req.socket?.remoteAddress ?? null);
}
