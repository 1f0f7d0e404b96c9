import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import type { Agent, fetch as UndiciFetch, RequestInit as UndiciRequestInit } from 'undici';

/** `[http]`: which private hosts URLs from the API may reach, how big an answer may be, how many redirects. */
export interface OutboundPolicy {
  /** Host names, addresses or CIDRs (`10.0.0.0/8`) that URLs from the API may reach although they are not public. */
  allowedPrivateHosts: readonly string[];
  maxResponseBytes: number;
  maxRedirects: number;
}

/** A request the policy refused: the message says which address and why, and how an operator allows it. */
export class OutboundRefusedError extends Error {}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** Whether `address` may be reached: a public unicast address, or one the allowlist names. */
function refusalFor(address: string, host: string, allowed: Allowlist): string | undefined {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    // IPv4-mapped IPv6 (`::ffff:127.0.0.1`) is judged as the IPv4 address it is.
    ip = ipaddr.process(address);
  } catch {
    return `${host}: "${address}" is not an address`;
  }
  const range = ip.range();
  if (range === 'unicast' || allowed.admits(host, ip)) return undefined;
  return `${host} resolves to ${ip.toString()}, a ${range} address; URLs from the API reach only public addresses unless [http] allowed_private_hosts lists the host`;
}

class Allowlist {
  private readonly hosts = new Set<string>();
  private readonly ranges: [ipaddr.IPv4 | ipaddr.IPv6, number][] = [];

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      if (entry.includes('/')) this.ranges.push(ipaddr.parseCIDR(entry));
      else if (ipaddr.isValid(entry)) this.ranges.push([ipaddr.process(entry), ipaddr.process(entry).kind() === 'ipv4' ? 32 : 128]);
      else this.hosts.add(entry.toLowerCase());
    }
  }

  admits(host: string, ip: ipaddr.IPv4 | ipaddr.IPv6): boolean {
    return this.hosts.has(host.toLowerCase()) || this.ranges.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
  }
}

/**
 * `fetch` for URLs that arrive through the API (MCP server URLs, URL tools): the address is checked when the
 * connection is made (the DNS answer actually used, so a name that re-resolves to a private address is caught),
 * every redirect is followed by hand and checked again, and the body is cut off past the size limit. URLs an
 * operator configured are trusted and fetched without it.
 */
export function createGuardedFetch(policy: OutboundPolicy): (url: string | URL, init?: RequestInit) => Promise<Response> {
  const allowed = new Allowlist(policy.allowedPrivateHosts);
  const lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      for (const { address } of addresses) {
        const refusal = refusalFor(address, hostname, allowed);
        if (refusal) return callback(new OutboundRefusedError(refusal), '', 0);
      }
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  // undici is loaded with the first request: most processes that import core never fetch a URL from the API.
  let client: Promise<{ dispatcher: Agent; fetch: typeof UndiciFetch }> | undefined;
  const undici = () => (client ??= import('undici').then(({ Agent, fetch }) => ({ dispatcher: new Agent({ connect: { lookup } }), fetch })));

  return async (input, init = {}) => {
    let url = new URL(input);
    let request = { ...init } as UndiciRequestInit;
    const { dispatcher, fetch } = await undici();
    for (let hop = 0; ; hop++) {
      checkLiteral(url, allowed);
      const response = (await fetch(url, { ...request, redirect: 'manual', dispatcher })) as unknown as Response;
      const location = response.headers.get('location');
      if (!REDIRECTS.has(response.status) || !location) return capped(response, policy.maxResponseBytes);
      if (hop >= policy.maxRedirects) throw new OutboundRefusedError(`more than ${policy.maxRedirects} redirects, from ${url.origin}`);
      await response.body?.cancel();
      url = new URL(location, url);
      // 303, and 301/302 after a POST, continue as GET without the body, as browsers do.
      if (response.status === 303 || ((response.status === 301 || response.status === 302) && request.method?.toUpperCase() === 'POST')) {
        request = { ...request, method: 'GET', body: undefined };
      }
    }
  };
}

/** A URL naming an address directly (`127.0.0.1`, `[::ffff:127.0.0.1]`, `0x7f000001`) is checked here: no lookup happens. */
function checkLiteral(url: URL, allowed: Allowlist): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new OutboundRefusedError(`${url.protocol} URLs are not fetched`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!net.isIP(host)) return;
  const refusal = refusalFor(host, host, allowed);
  if (refusal) throw new OutboundRefusedError(refusal);
}

/** The response with a body that errors once it passes `maxBytes`. */
function capped(response: Response, maxBytes: number): Response {
  if (!response.body) return response;
  let seen = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      seen += chunk.byteLength;
      if (seen > maxBytes) controller.error(new OutboundRefusedError(`the answer passed ${maxBytes} bytes ([http] max_response_bytes)`));
      else controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(limit), { status: response.status, statusText: response.statusText, headers: response.headers });
}
