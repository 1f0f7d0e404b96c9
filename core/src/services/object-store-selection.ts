import type { ObjectStoreBackend } from '@agent-host/sdk';

/** An object store whose `putStream` is always there (core's selection of the backend). */
export type StreamingObjectStore = ObjectStoreBackend & Required<Pick<ObjectStoreBackend, 'putStream'>>;

/**
 * `coreServices.objectStore`. Plugins resolve it while they initialise, before
 * the plugin providing the configured backend may have registered it, so it
 * forwards to the backend core selects once every plugin has initialised.
 */
export class SelectedObjectStore implements StreamingObjectStore {
  private backend?: ObjectStoreBackend;

  use(backend: ObjectStoreBackend): void {
    this.backend = backend;
  }

  async put(...args: Parameters<ObjectStoreBackend['put']>) {
    return this.selected().put(...args);
  }

  /** The backend's own streaming write, or its `put` with the bytes gathered. */
  async putStream(key: string, body: AsyncIterable<Uint8Array>, options: { contentType: string; size: number }) {
    const backend = this.selected();
    if (backend.putStream) return backend.putStream(key, body, options);
    const chunks: Uint8Array[] = [];
    for await (const chunk of body) chunks.push(chunk);
    return backend.put(key, Buffer.concat(chunks), { contentType: options.contentType });
  }

  async get(key: string) {
    return this.selected().get(key);
  }

  async open(key: string) {
    return this.selected().open(key);
  }

  async delete(key: string) {
    return this.selected().delete(key);
  }

  async exists(key: string) {
    return this.selected().exists(key);
  }

  async describeDownload(key: string) {
    return this.selected().describeDownload(key);
  }

  private selected(): ObjectStoreBackend {
    if (!this.backend) throw new Error('the object store is selected after every plugin has initialised; use it from an onStart hook or later');
    return this.backend;
  }
}
