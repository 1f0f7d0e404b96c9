import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { NotFoundError } from '@agent-host/sdk';
import type { Response } from 'restify';
import { buildAsyncApiDocument } from '../openapi/asyncapi-document.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../openapi/openapi-document.js';
import type { AnyRoute, RouteDefinition } from './route.js';

const require = createRequire(import.meta.url);
const packageDir = (name: string) => path.dirname(require.resolve(`${name}/package.json`));

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

/**
 * The only files served under each assets path (no other name resolves, so
 * no path can escape the package): URL name → file inside the npm package.
 */
const ASSETS = {
  docs: {
    dir: () => packageDir('swagger-ui-dist'),
    files: ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png', 'favicon-16x16.png'].map((f) => [f, f] as const),
  },
  redoc: {
    dir: () => path.join(packageDir('redoc'), 'bundles'),
    files: [['redoc.standalone.js', 'redoc.standalone.js']] as const,
  },
};

const SWAGGER_UI_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>agent-host API - Swagger UI</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png" sizes="32x32">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-16x16.png" sizes="16x16">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: '/openapi.json',
      dom_id: '#swagger-ui',
      deepLinking: true,
      withCredentials: true,
      validatorUrl: null,
      presets: [SwaggerUIBundle.presets.apis],
      layout: 'BaseLayout',
    });
  </script>
</body>
</html>
`;

const REDOC_HTML = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>agent-host API - ReDoc</title>
  <style>body { margin: 0; padding: 0; }</style>
</head>
<body>
  <redoc spec-url="/openapi.json"></redoc>
  <script src="/redoc/assets/redoc.standalone.js"></script>
</body>
</html>
`;

/**
 * The pages' policy: their own scripts and the inline bootstraps above by hash, nothing from elsewhere (the UIs
 * inline their styles and ReDoc starts a worker from a blob), and never framed.
 */
function contentSecurityPolicy(html: string): string {
  const inline = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]!).digest('base64')}'`);
  return [
    "default-src 'self'",
    `script-src 'self' ${inline.join(' ')}`.trim(),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "worker-src 'self' blob:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function sendHtml(res: Response, html: string): void {
  res.sendRaw(200, html, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
    'content-security-policy': contentSecurityPolicy(html),
  });
}

/**
 * `GET /openapi.json`, `GET /asyncapi.json` (the WebSocket interface), the Swagger UI page `/docs` and the ReDoc page
 * `/redoc`, with their assets served from the npm packages (the host may be
 * offline: no CDN). Everything needs an administrator login. The document
 * covers `routes` and these routes; it is built once, on the first request for it: building it at start-up cost
 * every start about 0.3 s of CPU (its zod schemas turned into JSON Schema) for a page few hosts are asked for.
 */
export function apiDocRoutes(routes: readonly AnyRoute[]): RouteDefinition[] {
  const assetCache = new Map<string, Promise<Buffer>>();

  const assetRoute = (ui: keyof typeof ASSETS): RouteDefinition => {
    const { files } = ASSETS[ui];
    const dir = ASSETS[ui].dir(); // resolved at start-up: a missing package fails here, not on a request
    const allowed = new Map<string, string>(files);
    return {
      method: 'get',
      path: `/${ui}/assets/:file`,
      access: { login: true },
      meta: true,
      summary: `A static asset of the ${ui === 'docs' ? 'Swagger UI' : 'ReDoc'} page (an allowlist of file names)`,
      handler: async (req, res) => {
        const name = String(req.params.file);
        const file = allowed.get(name);
        if (!file) throw new NotFoundError(`no asset ${name}`, { code: 'NOT_FOUND' });
        const key = `${ui}/${file}`;
        let content = assetCache.get(key);
        if (!content) {
          content = readFile(path.join(dir, file));
          content.catch(() => assetCache.delete(key));
          assetCache.set(key, content);
        }
        const body = await content;
        res.sendRaw(200, body, {
          'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
          'content-length': String(body.length),
          'cache-control': 'private, max-age=3600',
          'x-content-type-options': 'nosniff',
        });
        return undefined;
      },
    };
  };

  const docRoutes: RouteDefinition[] = [
    {
      method: 'get',
      path: '/openapi.json',
      access: { login: true },
      meta: true,
      summary: 'The OpenAPI 3.1 document of this API',
      handler: async () => documents().openApi,
    },
    {
      method: 'get',
      path: '/asyncapi.json',
      access: { login: true },
      meta: true,
      summary: 'The AsyncAPI 3.0 document of the WebSocket interface',
      handler: async () => documents().asyncApi,
    },
    {
      method: 'get',
      path: '/docs',
      access: { login: true },
      meta: true,
      summary: 'Interactive API documentation (Swagger UI)',
      handler: async (_req, res) => sendHtml(res, SWAGGER_UI_HTML),
    },
    assetRoute('docs'),
    {
      method: 'get',
      path: '/redoc',
      access: { login: true },
      meta: true,
      summary: 'API reference documentation (ReDoc)',
      handler: async (_req, res) => sendHtml(res, REDOC_HTML),
    },
    assetRoute('redoc'),
  ];
  let openApi: OpenApiDocument | undefined;
  let asyncApi: Record<string, unknown> | undefined;
  const documents = () => {
    openApi ??= buildOpenApiDocument([...routes, ...docRoutes]);
    asyncApi ??= buildAsyncApiDocument(openApi.info.version);
    return { openApi, asyncApi };
  };
  return docRoutes;
}
