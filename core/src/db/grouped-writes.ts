interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes that go many to a statement when they come faster than statements end, as Postgres groups commits: an item
 * is written at once while fewer than `concurrency` writes run, else it waits for one to end and goes with the items
 * that came meanwhile (up to `maxBatch`). Items of one `key` (the row they update), if given, are written one at a time, in the
 * order they came, never two in one statement. No item waits for a timer: a lone item is written as soon as it comes.
 * A write is one statement, all or nothing; when a batch fails, each of its items is written alone, so only the item
 * that cannot be written fails.
 */
export class GroupedWrites<T, R> {
  private waiting: Waiting<T, R>[] = [];
  private running = 0;
  /** The keys of the items being written. */
  private readonly writing = new Set<string>();

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly options: { concurrency: number; maxBatch: number; key?: (item: T) => string },
  ) {}

  submit(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.options.concurrency) {
      const batch = this.take();
      if (batch.length === 0) return;
      const { key } = this.options;
      const keys = key ? batch.map((w) => key(w.item)) : [];
      for (const key of keys) this.writing.add(key);
      this.running++;
      void this.run(batch).finally(() => {
        for (const key of keys) this.writing.delete(key);
        this.running--;
        this.next();
      });
    }
  }

  /** The oldest waiting items whose key no write holds, one per key; the others wait, in the order they came. */
  private take(): Waiting<T, R>[] {
    const { key: keyOf, maxBatch } = this.options;
    if (!keyOf) return this.waiting.splice(0, maxBatch);
    const keys = new Set(this.writing);
    const batch: Waiting<T, R>[] = [];
    const rest: Waiting<T, R>[] = [];
    for (const waiting of this.waiting) {
      const key = keyOf(waiting.item);
      if (batch.length < maxBatch && !keys.has(key)) batch.push(waiting);
      else rest.push(waiting);
      keys.add(key);
    }
    this.waiting = rest;
    return batch;
  }

  private async run(batch: Waiting<T, R>[]): Promise<void> {
    try {
      const results = await this.write(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1) return batch[0]!.reject(error);
      await Promise.all(batch.map((w) => this.write([w.item]).then(([result]) => w.resolve(result!), w.reject)));
    }
  }
}
