/** Metadata kept with a stored object. @public */
export interface StoredObjectInfo {
  key: string;
  size: number;
  content_type: string;
}

/**
 * How a client downloads an object (spec 2.6): a presigned public URL, or the
 * host's same-origin proxy with a warning explaining why.
 * @public
 */
export interface DownloadDescriptor {
  download_url: string | null;
  download_mode: 'presigned_url' | 'object_store_proxy';
  download_warning: string | null;
}

/**
 * Binary object storage (a local directory by default, S3-compatible by
 * plugin). Keys are relative paths; implementations refuse keys that could
 * escape the store (`assertObjectKey`).
 * @public
 */
export interface ObjectStore {
  put(key: string, data: Uint8Array, options: { contentType: string }): Promise<StoredObjectInfo>;
  /**
   * Stores `size` bytes read from `body` without holding them whole (uploads). Optional for a backend; the
   * `coreServices.objectStore` plugins get always has it, gathering the bytes for `put` when the backend lacks it.
   * Since SDK 1.4.0.
   */
  putStream?(key: string, body: AsyncIterable<Uint8Array>, options: { contentType: string; size: number }): Promise<StoredObjectInfo>;
  get(key: string): Promise<{ data: Uint8Array; info: StoredObjectInfo }>;
  delete(key: string): Promise<void>;
  exists(key: string): Promise<boolean>;
  /** How a client should download `key`. */
  describeDownload(key: string): Promise<DownloadDescriptor>;
}
