/** What the pool keeps: anything it can close. */
export interface Closable {
  close(): Promise<void>;
}

interface Entry<C> {
  key: string;
  ready: Promise<C>;
  leases: number;
  lastUsed: number;
  /** No new calls get it; it closes when its last call ends. */
  retired: boolean;
  idleTimer?: NodeJS.Timeout;
  closing?: Promise<void>;
}

export interface PoolOptions {
  /** How long a connection with no call in flight stays open. */
  idleTimeoutMs: number;
  /** Connections kept at once; past it a call gets a connection of its own, closed after the call. */
  maxConnections: number;
}

/** Handed to the work of {@link ConnectionPool.use}. */
export interface Lease {
  /** Stop handing this connection out (for example after a timeout left the server in doubt). */
  retire(): void;
}

/**
 * Connections by key, shared by concurrent calls, closed after an idle
 * timeout, when retired and drained, or all at once by {@link close}.
 */
export class ConnectionPool<C extends Closable> {
  private readonly byKey = new Map<string, Entry<C>>();
  private readonly live = new Set<Entry<C>>();
  private closed = false;

  constructor(private readonly options: PoolOptions) {}

  /**
   * Runs `work` on the connection for `key`, first opening one with `open`
   * when there is none. `open` gets a callback to call whenever the
   * connection closes (a crashed child, a dropped session), so it is never
   * handed out again. `wait` bounds the wait for a connection still opening.
   */
  async use<T>(
    key: string,
    open: (onDead: () => void) => Promise<C>,
    work: (connection: C, lease: Lease) => Promise<T>,
    wait: (ready: Promise<C>) => Promise<C>,
  ): Promise<T> {
    if (this.closed) throw new Error('the tool backend is closed');
    const entry = this.byKey.get(key) ?? this.add(key, open);
    entry.leases++;
    clearTimeout(entry.idleTimer);
    try {
      const connection = await wait(entry.ready);
      return await work(connection, { retire: () => this.retire(entry) });
    } finally {
      entry.leases--;
      entry.lastUsed = Date.now();
      this.settle(entry);
    }
  }

  /** Closes every connection, including those with calls in flight, and refuses new calls. */
  async close(): Promise<void> {
    this.closed = true;
    this.byKey.clear();
    await Promise.all([...this.live].map((entry) => this.shut(entry)));
  }

  private add(key: string, open: (onDead: () => void) => Promise<C>): Entry<C> {
    let overflow = false;
    if (this.byKey.size >= this.options.maxConnections) {
      const idle = [...this.byKey.values()].filter((e) => e.leases === 0).sort((a, b) => a.lastUsed - b.lastUsed)[0];
      if (idle) this.retire(idle);
      else overflow = true;
    }
    const entry = { key, leases: 0, lastUsed: Date.now(), retired: overflow } as Entry<C>;
    entry.ready = open(() => this.retire(entry));
    // A failed open is not kept: the next call tries again.
    entry.ready.catch(() => this.retire(entry));
    if (!overflow) this.byKey.set(key, entry);
    this.live.add(entry);
    return entry;
  }

  private retire(entry: Entry<C>): void {
    entry.retired = true;
    if (this.byKey.get(entry.key) === entry) this.byKey.delete(entry.key);
    if (entry.leases === 0) void this.shut(entry);
  }

  private settle(entry: Entry<C>): void {
    if (entry.leases > 0) return;
    if (entry.retired || this.closed) {
      void this.shut(entry);
      return;
    }
    entry.idleTimer = setTimeout(() => this.retire(entry), this.options.idleTimeoutMs);
    entry.idleTimer.unref();
  }

  private shut(entry: Entry<C>): Promise<void> {
    clearTimeout(entry.idleTimer);
    entry.closing ??= entry.ready
      .then(
        (connection) => connection.close(),
        () => undefined,
      )
      .catch(() => undefined)
      .finally(() => this.live.delete(entry));
    return entry.closing;
  }
}
