import type { Server } from 'node:http';

/**
 * Stops accepting connections, lets open requests (streams included) finish
 * for up to `timeoutMs`, then cuts what is left. Keep-alive sockets are closed
 * as soon as their last response ends, so they do not hold shutdown open.
 */
export async function closeHttpServer(server: Server, timeoutMs: number): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const idleSweep = setInterval(() => server.closeIdleConnections(), 50);
  const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
  await closed;
  clearInterval(idleSweep);
  clearTimeout(deadline);
}
