import { AgentHostApp, type AppOptions } from '@agent-host/core';
import { createServer } from './server.js';
import { closeHttpServer } from './shutdown.js';
import { createGateway, type Gateway } from './ws/gateway.js';

export interface RunningHost {
  app: AgentHostApp;
  url: string;
  /** The WebSocket gateway on the same HTTP server. */
  gateway: Gateway;
  /** Graceful stop: HTTP first, then jobs, plugins, database and embedded services. */
  stop(): Promise<void>;
}

/** Starts the app and serves it over HTTP. */
export async function startHost(options: AppOptions = {}): Promise<RunningHost> {
  const app = AgentHostApp.create(options);
  await app.start();
  const { server } = createServer(app);
  const gateway = createGateway(app.domains, app, server.server);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(app.config.server.port, app.config.server.host, () => resolve());
    });
  } catch (error) {
    await gateway.close();
    await app.stop();
    throw error;
  }
  const address = server.address();
  const url = `http://${app.config.server.host}:${address.port}`;
  let stopping: Promise<void> | undefined;
  return {
    app,
    url,
    gateway,
    stop: () =>
      (stopping ??= (async () => {
        // WebSocket clients are told to go first: their connections would otherwise hold the HTTP server open.
        await gateway.close();
        await closeHttpServer(server.server, app.config.server.shutdown_timeout_seconds * 1000);
        await app.stop();
      })()),
  };
}
