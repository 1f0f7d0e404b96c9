import type { StreamingObjectStore } from './object-store-selection.js';

/** A download triple (spec 4.10): where to fetch a stored object, how, and why not directly. */
export interface DownloadTriple {
  url: string | null;
  mode: string | null;
  warning: string | null;
}

/** A presigned URL when the object store offers one, else `route`, the resource's own same-origin proxy; all null without an object. */
export async function downloadTriple(store: StreamingObjectStore, key: string | null, route: string): Promise<DownloadTriple> {
  if (!key) return { url: null, mode: null, warning: null };
  const described = await store.describeDownload(key);
  return {
    url: described.download_mode === 'object_store_proxy' ? route : described.download_url,
    mode: described.download_mode,
    warning: described.download_warning,
  };
}
