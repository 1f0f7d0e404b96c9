interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Calls that go many to a statement (or a request) when they come faster than statements end, as Postgres groups
 * commits: an item goes at once while fewer than `concurrency` calls run, else it waits for one to end and goes with
 * the items that came meanwhile (up to `maxBatch`). Items of one `key` (the row they update), if given, go one at a
 * time, in the order they came, never two in one call. No item waits for a timer: a lone item goes as soon as it comes.
 * A call is all or nothing; when a batch fails, each of its items is tried alone, so only the item that cannot go
 * fails, unless `retryAlone` is false: calls whose items do not fail one by one (queries of one store, which a down or
 * hung store fails all alike) fail all their items with the batch's error. Used for turns' writes and for the vector
 * index's queries.
 */
export class GroupedCalls<T, R> {
  private waiting: Waiting<T, R>[] = [];
  private running = 0;
  /** The keys of the items in calls that run. */
  private readonly busy = new Set<string>();

  constructor(
    private readonly call: (items: T[]) => Promise<R[]>,
    private readonly options: { concurrency: number; maxBatch: number; key?: (item: T) => string; retryAlone?: boolean },
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
      for (const key of keys) this.busy.add(key);
      this.running++;
      void this.run(batch).finally(() => {
        for (const key of keys) this.busy.delete(key);
        this.running--;
        this.next();
      });
    }
  }

  /** The oldest waiting items whose key no running call holds, one per key; the others wait, in the order they came. */
  private take(): Waiting<T, R>[] {
    const { key: keyOf, maxBatch } = this.options;
    if (!keyOf) return this.waiting.splice(0, maxBatch);
    const keys = new Set(this.busy);
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
      const results = await this.call(batch.map((w) => w.item));
      batch.forEach((w, i) => w.resolve(results[i]!));
    } catch (error) {
      if (batch.length === 1 || this.options.retryAlone === false) return batch.forEach((w) => w.reject(error));
      await Promise.all(batch.map((w) => this.call([w.item]).then(([result]) => w.resolve(result!), w.reject)));
    }
  }
}
