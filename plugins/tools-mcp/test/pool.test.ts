// tools-mcp: the connection pool — reuse, idle close, retirement, the
// connection cap and shutdown — on stand-in connections that count opens and closes.
import t from 'tap';
import { ConnectionPool } from '../src/lib/pool.js';

class Conn {
  closed = 0;
  constructor(readonly id: number) {}
  async close() {
    this.closed++;
  }
}

function harness(options = { idleTimeoutMs: 60_000, maxConnections: 4 }) {
  const pool = new ConnectionPool<Conn>(options);
  const opened: Conn[] = [];
  const deaths: (() => void)[] = [];
  const open = (onDead: () => void) => {
    const conn = new Conn(opened.length + 1);
    opened.push(conn);
    deaths.push(onDead);
    return Promise.resolve(conn);
  };
  const use = <T = Conn>(key: string, work?: (c: Conn, lease: { retire(): void }) => Promise<T>) =>
    pool.use(key, open, work ?? (async (c) => c as unknown as T), (ready) => ready);
  return { pool, opened, deaths, use };
}

const tick = (ms = 0) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('calls for one key reuse one connection, including calls that arrive while it opens', async (t) => {
  const { opened, use, pool } = harness();
  const [a, b, c] = await Promise.all([use('k'), use('k'), use('k')]);
  t.equal(opened.length, 1, 'concurrent first calls share one open');
  t.equal(a, b, 'the first two callers got one connection');
  t.equal(b, c, 'and so did the third');
  t.equal(await use('k'), a, 'a later call gets the same connection');
  t.not(await use('other'), a, 'another key gets its own connection');
  await pool.close();
});

t.test('an idle connection closes after the idle timeout, and the next call opens a new one', async (t) => {
  const { opened, use, pool } = harness({ idleTimeoutMs: 30, maxConnections: 4 });
  const first = await use('k');
  await tick(80);
  t.equal(first.closed, 1, 'closed once idle');
  t.not(await use('k'), first, 'a new connection after the idle close');
  t.equal(opened.length, 2, 'two opens in all');
  await pool.close();
});

t.test('a connection with a call in flight is not closed by the idle timer', async (t) => {
  const { use, pool } = harness({ idleTimeoutMs: 20, maxConnections: 4 });
  const conn = await use('k', async (c) => {
    await tick(80);
    return c;
  });
  t.equal(conn.closed, 0, 'still open after a call longer than the idle timeout');
  await pool.close();
});

t.test('a retired connection takes no new calls and closes when its last call ends', async (t) => {
  const { use, pool } = harness();
  let release!: () => void;
  const held = use('k', (c) => new Promise<Conn>((resolve) => (release = () => resolve(c))));
  await tick();
  const retired = await use('k', async (c, lease) => {
    lease.retire();
    return c;
  });
  t.equal(retired.closed, 0, 'not closed while another call still holds it');
  t.not(await use('k'), retired, 'new calls get a new connection');
  release();
  await held;
  await tick();
  t.equal(retired.closed, 1, 'closed when the last call ended');
  await pool.close();
});

t.test('a connection that dies on its own is dropped and closed', async (t) => {
  const { use, deaths, pool } = harness();
  const conn = await use('k');
  deaths[0]!();
  await tick();
  t.equal(conn.closed, 1, 'the dead connection is closed');
  t.not(await use('k'), conn, 'the next call opens a new one');
  await pool.close();
});

t.test('a failed open is not kept: the next call tries again', async (t) => {
  const pool = new ConnectionPool<Conn>({ idleTimeoutMs: 60_000, maxConnections: 4 });
  let attempts = 0;
  const open = async () => {
    attempts++;
    if (attempts === 1) throw new Error('refused');
    return new Conn(attempts);
  };
  await t.rejects(
    pool.use(
      'k',
      open,
      async (c) => c,
      (r) => r,
    ),
    { message: 'refused' },
    'the first call gets the open error',
  );
  t.equal(
    (
      await pool.use(
        'k',
        open,
        async (c) => c,
        (r) => r,
      )
    ).id,
    2,
    'the second call opened afresh',
  );
  await pool.close();
});

t.test('at max_connections the least recently used idle connection makes room', async (t) => {
  const { use, pool } = harness({ idleTimeoutMs: 60_000, maxConnections: 2 });
  const a = await use('a');
  await tick(2);
  const b = await use('b');
  await tick(2);
  await use('a');
  await use('c');
  await tick();
  t.equal(b.closed, 1, 'b, used least recently, is closed');
  t.equal(a.closed, 0, 'a stays');
  await pool.close();
});

t.test('at max_connections with every connection busy a call gets a one-off connection', async (t) => {
  const { use, pool } = harness({ idleTimeoutMs: 60_000, maxConnections: 1 });
  let release!: () => void;
  const busy = use('a', (c) => new Promise<Conn>((resolve) => (release = () => resolve(c))));
  await tick();
  const oneOff = await use('b');
  await tick();
  t.equal(oneOff.closed, 1, 'closed right after its call');
  t.not(await use('b'), oneOff, 'and not handed out again');
  release();
  t.equal((await busy).closed, 0, 'the busy connection is untouched');
  await pool.close();
});

t.test('close() closes every connection, busy ones included, and refuses new calls', async (t) => {
  const { use, pool } = harness();
  const idle = await use('a');
  let inFlight!: Conn;
  const busy = use('b', (c) => {
    inFlight = c;
    return new Promise<Conn>(() => undefined);
  });
  void busy;
  await tick();
  await pool.close();
  t.equal(idle.closed, 1, 'an idle connection is closed');
  t.equal(inFlight.closed, 1, 'a connection with a call in flight is closed too');
  await t.rejects(use('a'), { message: 'the tool backend is closed' }, 'no call after close');
});
