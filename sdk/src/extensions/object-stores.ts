import { BadRequestError } from '../errors.js';
import type { DownloadDescriptor, ObjectStore, StoredObjectInfo } from '../services/object-store.js';

/**
 * An object store backend, registered under the name that
 * `[object_store] backend` selects (`local`, a directory, is built in). Core
 * hands the selected backend to every plugin as `coreServices.objectStore`
 * and serves its proxy downloads through `open`.
 * @public
 */
export interface ObjectStoreBackend extends ObjectStore {
  /** Streams the bytes of `key`; a missing key rejects with `NotFoundError`. */
  open(key: string): Promise<{ body: AsyncIterable<Uint8Array>; info: StoredObjectInfo }>;
}

/** Where the host serves same-origin proxy downloads; the key follows, one URI-encoded segment per `/`. @public */
export const OBJECT_STORE_PROXY_PATH = '/object-store/objects';

const MAX_KEY_BYTES = 1024; // S3's limit, kept for every backend so keys move between them

/**
 * Refuses (`BadRequestError`) a key that could address something outside the
 * store: empty, absolute, with a backslash or control character, an empty,
 * `.` or `..` segment, or longer than 1024 bytes. Every backend applies this
 * rule, so a key valid on one is valid on all.
 * @public
 */
export function assertObjectKey(key: string): void {
  const refuse = (why: string) => {
    throw new BadRequestError(`invalid object key ${JSON.stringify(key)}: ${why}`, { code: 'OBJECT_KEY_INVALID' });
  };
  if (typeof key !== 'string' || key === '') refuse('empty');
  if (new TextEncoder().encode(key).byteLength > MAX_KEY_BYTES) refuse(`longer than ${MAX_KEY_BYTES} bytes`);
  if (key.startsWith('/')) refuse('absolute');
  if (key.includes('\\')) refuse('contains a backslash');
  if (/[\u0000-\u001f\u007f]/.test(key)) refuse('contains a control character');
  if (key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) refuse('has an empty, "." or ".." segment');
}

/**
 * The download descriptor of the host's same-origin proxy for `key`, with the
 * reason no public URL is offered (spec: `download_mode=object_store_proxy`).
 * @public
 */
export function objectStoreProxyDownload(key: string, warning: string): DownloadDescriptor {
  assertObjectKey(key);
  return {
    download_url: `${OBJECT_STORE_PROXY_PATH}/${key.split('/').map(encodeURIComponent).join('/')}`,
    download_mode: 'object_store_proxy',
    download_warning: warning,
  };
}

/**
 * A `Content-Disposition: attachment` value naming `filename` in ASCII and in
 * RFC 5987 form, so any name survives. Stored files come from uploads: sent
 * as attachments, a browser neither sniffs nor runs them.
 * @public
 */
export function attachmentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** The file name an object key ends with (the host keeps a cleaned copy of the original name there). @public */
export const objectKeyFilename = (key: string) => key.slice(key.lastIndexOf('/') + 1);
