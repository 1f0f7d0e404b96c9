import { existsSync, readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { NotFoundError } from '@agent-host/sdk';
import type { Request, Response } from 'restify';
import type { RouteDefinition } from './route.js';

const gzip = promisify(gzipCallback);

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.svg']);

/**
 * The console's policy: its own scripts, styles and API only. Its bundle has no inline script or style, so none is
 * allowed; the socket.io connections are same-origin. Images may also come from the object store's public endpoint,
 * where presigned URLs (a recognition run's page previews) point.
 */
function consolePolicy(objectStoreEndpoint: string): string {
  const images = ["'self'", 'data:', ...(objectStoreEndpoint ? [new URL(objectStoreEndpoint).origin] : [])].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${images}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The built console (`npm run build` writes the console workspace's dist), or undefined when it was not built. */
function builtConsoleDir(): string | undefined {
  try {
    const dir = path.join(path.dirname(createRequire(import.meta.url).resolve('@agent-host/console/package.json')), 'dist');
    return existsSync(path.join(dir, 'index.html')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** Every file of the build by its URL path under /console: only these names resolve, so no path escapes the folder. */
function listFiles(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, file).split(path.sep).join('/'), file);
  }
  return files;
}

/**
 * `GET /console` and everything under it: the web console's static files, the same origin as the API so its login
 * cookies just work. A path that is no file is a page of the console (its router reads the URL), answered with
 * index.html; only a missing asset is a 404. Vite names assets by content hash, so they are cached for good and
 * index.html never is. Files are read once, and gzipped once for clients that accept it.
 */
export function consoleRoutes(objectStoreEndpoint: string): RouteDefinition[] {
  const policy = consolePolicy(objectStoreEndpoint);
  const dir = builtConsoleDir();
  const files = dir ? listFiles(dir) : new Map<string, string>();
  const cache = new Map<string, Promise<{ plain: Buffer; gzipped?: Buffer }>>();

  const load = (name: string, file: string) => {
    let entry = cache.get(name);
    if (!entry) {
      entry = readFile(file).then(async (plain) => ({ plain, ...(COMPRESSIBLE.has(path.extname(name)) && { gzipped: await gzip(plain) }) }));
      entry.catch(() => cache.delete(name));
      cache.set(name, entry);
    }
    return entry;
  };

  const serve = async (req: Request, res: Response) => {
    if (!dir) throw new NotFoundError('the console is not built: run npm run build (npm start builds it)', { code: 'NOT_FOUND' });
    const wanted = String(req.params['*'] ?? '');
    const asset = files.has(wanted) && wanted !== 'index.html';
    if (!asset && wanted.startsWith('assets/')) throw new NotFoundError(`no console asset ${wanted}`, { code: 'NOT_FOUND' });
    const name = asset ? wanted : 'index.html';
    const { plain, gzipped } = await load(name, files.get(name)!);
    const useGzip = gzipped !== undefined && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = useGzip ? gzipped : plain;
    res.sendRaw(200, body, {
      'content-type': CONTENT_TYPES[path.extname(name)] ?? 'application/octet-stream',
      'content-length': String(body.length),
      'cache-control': name.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'Accept-Encoding',
      ...(useGzip && { 'content-encoding': 'gzip' }),
      ...(name.endsWith('.html') && { 'content-security-policy': policy }),
    });
    return undefined;
  };

  const page = (routePath: string): RouteDefinition => ({
    method: 'get',
    path: routePath,
    access: { public: true },
    meta: true,
    summary: 'The web console (static files; its pages call this API with the login cookies)',
    handler: serve,
  });
  return [page('/console'), page('/console/*')];
}
