import { inRequestScope, type AgentHostApp, type Domains } from '@agent-host/core';
import { AgentHostError, ForbiddenError, UnsupportedMediaTypeError } from '@agent-host/sdk';
import restify, { type Request, type Response } from 'restify';
import { errorEnvelope } from './http/error-envelope.js';
import { refuseMalformedIds } from './http/path-params.js';
import { adminGuard } from './access/admin-guard.js';
import { crossSiteRefusal } from './access/browser-origin.js';
import { clientAddressReader, rememberClientAddress } from './access/client-address.js';
import { CHALLENGE_HEADER, originOf } from './access/route-access.js';
import { corsFor, setSecurityHeaders } from './http/security-headers.js';
import { apiDocRoutes } from './routes/api-docs.js';
import { consoleRoutes } from './routes/console.js';
import { routeFactories } from './routes/index.js';
import { parseBody, parseQuery } from './validation.js';
import type { RouteDefinition } from './routes/route.js';

/** How long an idle keep-alive connection stays open: longer than the clients' and load balancers' own idle limits. */
const KEEP_ALIVE_MS = 65_000;

/** What an incoming X-Request-Id may be: printable, no spaces, at most 128 characters. */
const REQUEST_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** The app's domains, each read when it is used: the route table is built before the app starts (`agent-host openapi`). */
function lateDomains(app: AgentHostApp): Domains {
  return new Proxy({} as Domains, { get: (_target, name) => app.domains[name as keyof Domains] });
}

/** The restify server with every route file mounted behind the administrator guard. */
export function createServer(app: AgentHostApp) {
  const guard = adminGuard(lateDomains(app));
  const log = app.logger.child({ component: 'http' });
  // No name: restify would announce it in a Server header on every response.
  const server = restify.createServer({ name: '', handleUncaughtExceptions: false });
  // An idle keep-alive connection is left for the client to close: a server that closes it first races a client
  // reusing it, whose request then fails with ECONNRESET. Node closes after 5 s; load balancers keep theirs for 60 s.
  server.server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.server.headersTimeout = KEEP_ALIVE_MS + 1000;
  const { cors_origins: corsOrigins } = app.config.server;
  const hsts = app.config.admin.access_cookie_secure;
  const domains = lateDomains(app);
  const routes: RouteDefinition[] = routeFactories.flatMap((factory) => factory(domains, app));
  routes.push(...apiDocRoutes(routes)); // /openapi.json, /docs and /redoc describe every route, themselves included
  routes.push(...consoleRoutes(app.config.object_store.public_endpoint));

  const clientAddress = clientAddressReader(app.config.server.trusted_proxies);
  server.pre((req, res, next) => {
    rememberClientAddress(req, clientAddress(req));
    setSecurityHeaders(res, { hsts });
    const allowed = corsFor(req, res, corsOrigins);
    if (req.method === 'OPTIONS') {
      // A preflight: answered here for allowed origins, refused for the rest (CORS is off unless configured).
      if (allowed) {
        res.setHeader('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE');
        res.setHeader('access-control-allow-headers', 'authorization, content-type, x-admin-challenge-token, x-request-id');
        res.setHeader('access-control-max-age', '600');
      }
      res.writeHead(allowed ? 204 : 403);
      res.end();
      return;
    }
    // Every response names its request: a caller's own valid X-Request-Id is kept (a proxy's or a client's, to follow
    // one request across systems), else the host's; the same id is in the request's log line and 500 log entries.
    const incoming = req.headers['x-request-id'];
    // restify's req.id(value) sets the id once; its type declarations omit the setter.
    if (typeof incoming === 'string' && REQUEST_ID.test(incoming)) (req as unknown as { id(value: string): string }).id(incoming);
    res.setHeader('x-request-id', req.id());
    next();
  });
  server.use(restify.plugins.queryParser({ mapParams: false }));
  // Multipart uploads are streamed by their routes under their own size limit, never buffered here.
  const bodyParsers = restify.plugins.bodyParser({ mapParams: false, maxBodySize: 1024 * 1024, rejectUnknown: false }) as unknown as restify.RequestHandler[];
  server.use(
    bodyParsers.map(
      (parse): restify.RequestHandler =>
        (req, res, next) =>
          req.getContentType() === 'multipart/form-data' ? next() : parse(req, res, next),
    ),
  );

  for (const route of routes) {
    // Everything the route does runs in the request's scope: its log lines and audit rows name the request. Set
    // here, not in `pre`: the body parser resumes from the socket's events, outside any scope set before it.
    server[route.method](route.path, async (req: Request, res: Response) =>
      route.unscoped ? serve(route, req, res) : inRequestScope(req.id(), () => serve(route, req, res)),
    );
  }

  async function serve(route: RouteDefinition, req: Request, res: Response): Promise<void> {
    if (route.method !== 'get') {
      const crossSite = crossSiteRefusal(req, corsOrigins);
      if (crossSite) throw new ForbiddenError(crossSite, { code: 'CROSS_SITE_REQUEST' });
      refuseUnexpectedBody(req, route.multipart ? ['multipart/form-data'] : route.form ? ['application/json', 'multipart/form-data'] : ['application/json']);
    }
    const principal = await guard.authorize(req, route.access);
    refuseMalformedIds(route.path, req.params as Record<string, string>);
    const header = req.headers[CHALLENGE_HEADER];
    const challengeToken = 'challenge' in route.access && typeof header === 'string' ? header : undefined;
    const isForm = route.form !== undefined && req.getContentType() === 'multipart/form-data';
    const body = route.body && !isForm ? parseBody(route.body, req.body) : undefined;
    const query = route.query ? parseQuery(route.query, req.query) : undefined;
    const origin = originOf(req);
    const context = {
      principal,
      origin,
      challengeToken,
      body,
      query,
      get operation() {
        // Only a route that declares no login reads it without an administrator: a mistake in the route, not the request.
        if (!principal) throw new Error(`${route.method.toUpperCase()} ${route.path} reads the operation but serves anonymous callers`);
        return { operator: principal, origin };
      },
    };
    const result = await route.handler(req, res, context);
    if (!res.headersSent) res.send(result);
  }

  // Every error leaves in one envelope (http/error-envelope.ts); unexpected errors never expose their message.
  server.on('restifyError', (req: Request, res: Response, err: Error & { statusCode?: number; toJSON?: () => unknown }, next: () => void) => {
    const { status, body, headers } = errorEnvelope(err, { id: req.id(), method: req.method ?? '', path: req.path() });
    if (body.code === 'DATABASE_UNAVAILABLE') log.warn({ err: err.message, method: req.method, url: req.url, req_id: req.id() }, 'database unreachable');
    else if (status >= 500 && !(err instanceof AgentHostError)) log.error({ err, method: req.method, url: req.url, req_id: req.id() }, 'unhandled error');
    for (const [name, value] of Object.entries(headers)) res.header(name, value);
    (err as { statusCode?: number }).statusCode = status;
    err.toJSON = () => body;
    next();
  });

  server.on('after', (req: Request, res: Response, _route: unknown, err?: Error) => {
    log.info(
      { method: req.method, url: req.url, status: res.statusCode, ms: Date.now() - req.time(), req_id: req.id(), ...(err && { err: err.message }) },
      'request',
    );
  });

  return { server, routes };
}

/**
 * A body only in the type the route reads: JSON, or multipart on upload routes. A form-encoded or text body is what
 * a plain HTML form on another site can send with the administrator's cookie, without a CORS preflight.
 */
function refuseUnexpectedBody(req: Request, expected: string[]): void {
  const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
  if (hasBody && !expected.includes(req.getContentType())) {
    throw new UnsupportedMediaTypeError(`send the request body as ${expected.join(' or ')}${req.getContentType() ? `, not ${req.getContentType()}` : ''}`);
  }
}
