import pg from 'pg';

/**
 * The connection pool handed to the socket.io Postgres adapter. The adapter
 * keeps one LISTEN connection checked out and cannot release it when it is
 * closed while still opening it, which would hold `pool.end()` forever; this
 * pool tracks what it hands out and ends it on close. After close the
 * adapter's reconnect attempts wait forever instead of spinning. Close first
 * lets the queries already sent finish: the last is the adapter's goodbye,
 * which tells the other instances to stop relaying to this one.
 */
export function createAdapterPool(connectionString: string, onError: (err: Error) => void) {
  const pool = new pg.Pool({ connectionString, max: 3 });
  pool.on('error', onError);
  const checkedOut = new Set<pg.PoolClient>();
  let closed = false;
  const never = () => new Promise<never>(() => undefined);
  const inFlight = new Set<Promise<unknown>>();
  const adapterPool = {
    query(...args: Parameters<pg.Pool['query']>) {
      const sent = (pool.query as (...a: unknown[]) => Promise<unknown>)(...args);
      inFlight.add(sent);
      void sent.finally(() => inFlight.delete(sent)).catch(() => undefined);
      return sent;
    },
    async connect(): Promise<pg.PoolClient> {
      if (closed) return never();
      const client = await pool.connect();
      if (closed) {
        client.release(true);
        return never();
      }
      checkedOut.add(client);
      // The adapter holds its LISTEN client checked out, where pg-pool no longer hears its errors: a lost connection
      // is logged here (the adapter reconnects), not thrown at the process.
      if (!client.listeners('error').includes(onError)) client.on('error', onError);
      const release = client.release.bind(client);
      client.release = (destroy?: Error | boolean) => {
        checkedOut.delete(client);
        return release(destroy);
      };
      return client;
    },
  } as unknown as pg.Pool;
  return {
    pool: adapterPool,
    async close(): Promise<void> {
      closed = true;
      await Promise.allSettled(inFlight);
      for (const client of [...checkedOut]) client.release(true);
      await pool.end();
    },
  };
}
