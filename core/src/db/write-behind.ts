/**
 * Rows written behind the work that makes them, many to a statement: a write when `batchSize` rows wait, or
 * `maxDelayMs` after the first of them, one write at a time and in order. A write that fails is reported to
 * `onError` and its rows are not written; `drain()` writes what waits and resolves once every write has ended.
 */
export class WriteBehind<T> {
  private waiting: T[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: (rows: T[]) => Promise<void>,
    private readonly options: { batchSize: number; maxDelayMs: number; onError: (error: unknown) => void },
  ) {}

  add(row: T): void {
    this.waiting.push(row);
    if (this.waiting.length >= this.options.batchSize) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.options.maxDelayMs);
  }

  drain(): Promise<void> {
    this.flush();
    return this.writes;
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.waiting.length === 0) return;
    const rows = this.waiting;
    this.waiting = [];
    this.writes = this.writes.then(() => this.write(rows)).catch(this.options.onError);
  }
}
