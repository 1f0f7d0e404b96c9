import type { Server } from 'node:http';

/**
 * Stops accepting connections, lets open requests (streams included) finish
 * for up to `timeoutMs`, then cuts what is left.
 */
export async function closeHttpServer(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const timer = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearTimeout(timer);
}
