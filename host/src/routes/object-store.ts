import { pipeline } from 'node:stream/promises';
import { assertObjectKey, attachmentDisposition, BadRequestError, OBJECT_STORE_PROXY_PATH, objectKeyFilename } from '@agent-host/sdk';
import { route, type RouteFactory } from './route.js';

/**
 * The object key of a proxy request. Read from the raw path, never through
 * URL parsing (which would resolve `..` before the check), and checked after
 * decoding, so `%2e%2e`, `%2f` and `%5c` are refused like their plain forms.
 */
export function keyFromProxyPath(rawUrl: string): string {
  const rawPath = rawUrl.split(/[?#]/, 1)[0]!;
  const encoded = rawPath.slice(OBJECT_STORE_PROXY_PATH.length + 1);
  let key: string;
  try {
    key = encoded.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw new BadRequestError('the object key is not valid percent-encoding', { code: 'OBJECT_KEY_INVALID' });
  }
  assertObjectKey(key);
  return key;
}

/**
 * The same-origin download proxy (`download_mode=object_store_proxy`): streams
 * an object of the selected backend. Stored files come from uploads, so they
 * are sent as attachments the browser neither sniffs nor runs.
 */
export const objectStoreRoutes: RouteFactory = (_domains, app) => {
  const log = app.logger.child({ component: 'object-store-proxy' });
  return [
    route({
      method: 'get',
      path: `${OBJECT_STORE_PROXY_PATH}/*`,
      access: { permission: 'knowledge.read' },
      summary: 'Download a stored object through the host (when no presigned URL is offered)',
      success: { status: 200, description: 'The object, as an attachment in the type it was stored with', contentType: '*/*' },
      refusals: { 400: 'The object key is not valid (OBJECT_KEY_INVALID)', 404: 'No such object (OBJECT_NOT_FOUND)' },
      handler: async (req, res) => {
        const key = keyFromProxyPath(req.url ?? '');
        const { body, info } = await app.objectStore.open(key);
        res.writeHead(200, {
          'content-type': info.content_type,
          'content-length': String(info.size),
          'content-disposition': attachmentDisposition(objectKeyFilename(key)),
          'x-content-type-options': 'nosniff',
          'content-security-policy': "default-src 'none'; sandbox",
          'cache-control': 'private, no-cache',
        });
        try {
          await pipeline(body, res);
        } catch (error) {
          // The status is sent; pipeline has already cut the response, which is all the client can be told.
          log.warn({ err: error, key }, 'object download ended early');
        }
        return undefined;
      },
    }),
  ];
};
