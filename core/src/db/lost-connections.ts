import type { Logger } from '@agent-host/sdk';
import pg from 'pg';

let heard = false;

/**
 * A connection to Postgres that the server drops while it sits between statements (the server restarted, or died)
 * reports it as an `error` event on its pg `Client`; a client with no listener would end the whole process. Each
 * library that opens connections here attaches its own listener (Sequelize, the Agenda and socket.io pools, the
 * advisory lock), and a rare restart under load still ended the host once in a while: every client this process
 * opens also hears it here, logged once per client. The client is done either way; its owner's next query fails
 * and reconnects. Patched once per process, on pg's own `Client`, which every library here shares.
 */
export function hearLostConnections(logger: Logger): void {
  if (heard) return;
  heard = true;
  const connect = pg.Client.prototype.connect;
  pg.Client.prototype.connect = function (this: pg.Client, ...args: unknown[]) {
    let logged = false;
    this.on('error', (error: Error) => {
      if (!logged) logger.warn({ err: error.message }, 'a Postgres connection was lost');
      logged = true;
    });
    return (connect as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof connect;
}
