/** What `POST /embedding-model/check-readiness` reports. @public */
export interface EmbedderInfo {
  backend_type: string;
  provider: string;
  model: string;
  dim: number;
}

/**
 * Turns texts into vectors, registered under a backend name.
 * @public
 */
export interface Embedder {
  describe(): EmbedderInfo;
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}
