/**
 * A server the host or the test harness runs as a child process on loopback (Postgres, Chroma, FerretDB): installed
 * or built on first use into the cache outside the clone, started on a free port, stopped with its process.
 */
export interface EmbeddedServer {
  /** What it is, for logs and failures. */
  readonly name: string;
  /** Starts it; resolves once it answers, rejects with the reason (and its last output) when it cannot. */
  start(): Promise<void>;
  /** Stops it and waits for its process to exit; nothing is left running. */
  stop(): Promise<void>;
  /** Where clients reach it, once started: a database of it for servers that hold several. */
  url(database?: string): string;
}
