import t from 'tap';
import { GroupedCalls } from '../../core/src/services/grouped-calls.js';

/** Lets pending promise callbacks and immediates run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

interface Item {
  key: string;
  n: number;
}

/** Writes that each wait until the test ends them (`end(i)`), so what runs at once is seen without timing. */
function controlled(
  options: { concurrency: number; maxBatch: number; keyed?: boolean; retryAlone?: boolean },
  fails: (items: Item[]) => boolean = () => false,
) {
  const started: number[][] = [];
  const ends: (() => void)[] = [];
  const writes = new GroupedCalls<Item, string>(
    (items) => {
      started.push(items.map((i) => i.n));
      return new Promise((resolve, reject) =>
        ends.push(() => (fails(items) ? reject(new Error(`cannot write ${items.map((i) => i.n).join(',')}`)) : resolve(items.map((i) => `wrote ${i.n}`)))),
      );
    },
    { ...options, key: options.keyed === false ? undefined : (item) => item.key },
  );
  const results: string[] = [];
  const submit = (n: number, key = `k${n}`) =>
    writes.submit({ key, n }).then(
      (result) => results.push(result),
      (error: Error) => results.push(`failed ${n}: ${error.message}`),
    );
  const end = async (i: number) => {
    ends[i]!();
    await settle();
  };
  return { started, results, submit, end };
}

t.test('items are written at once while writes are free, and those that came meanwhile go together', async (t) => {
  const { started, results, submit, end } = controlled({ concurrency: 2, maxBatch: 64 });
  void submit(1);
  await settle();
  t.same(started, [[1]], 'a lone item is written at once, alone, with no timer');
  for (const n of [2, 3, 4, 5]) void submit(n);
  await settle();
  t.same(started, [[1], [2]], 'a second write runs beside the first; the others wait');
  await end(1);
  t.same(started, [[1], [2], [3, 4, 5]], 'when a write ends, every item that waited goes in the next one, in the order they came');
  t.same(results, ['wrote 2'], 'each item gets its own result when its write ends');
  await end(0);
  await end(2);
  t.same(results, ['wrote 2', 'wrote 1', 'wrote 3', 'wrote 4', 'wrote 5'], 'every item was written once');
});

t.test('a batch holds at most maxBatch items and one item per key', async (t) => {
  const { started, submit, end } = controlled({ concurrency: 1, maxBatch: 3 });
  void submit(1);
  for (const [n, key] of [
    [2, 'a'],
    [3, 'b'],
    [4, 'a'],
    [5, 'c'],
    [6, 'd'],
  ] as const)
    void submit(n, key);
  await settle();
  await end(0);
  t.same(started.at(-1), [2, 3, 5], 'an item whose key is already in the batch waits, and the batch stops at three items');
  await end(1);
  t.same(started.at(-1), [4, 6], 'the item that waited for its key goes in the next batch, still ahead of those after it');
});

t.test('without a key, items of the same row go together, up to maxBatch', async (t) => {
  const { started, submit, end } = controlled({ concurrency: 1, maxBatch: 3, keyed: false });
  for (const n of [1, 2, 3, 4, 5]) void submit(n, 'same');
  await settle();
  t.same(started, [[1]], 'the first goes at once');
  await end(0);
  t.same(started, [[1], [2, 3, 4]], 'then the others together, though they share a key, up to maxBatch');
  await end(1);
  t.same(started, [[1], [2, 3, 4], [5]], 'and the last after them');
  await end(2);
});

t.test('an item waits while an item of its key is written, even with a write free', async (t) => {
  const { started, submit, end } = controlled({ concurrency: 2, maxBatch: 64 });
  void submit(1, 'a');
  void submit(2, 'a');
  void submit(3, 'b');
  await settle();
  t.same(started, [[1], [3]], 'the second item of key a waits; an item of another key takes the free write');
  await end(1);
  t.same(started, [[1], [3]], 'and still waits when that write ends');
  await end(0);
  t.same(started, [[1], [3], [2]], 'it is written once the first item of its key is');
});

t.test('a batch that fails is written again item by item, so only the item that cannot be written fails', async (t) => {
  const { started, results, submit, end } = controlled({ concurrency: 1, maxBatch: 64 }, (items) => items.some((i) => i.n === 3));
  void submit(1);
  for (const n of [2, 3, 4]) void submit(n);
  await settle();
  await end(0);
  t.same(started, [[1], [2, 3, 4]], 'the three that waited were tried together');
  await end(1);
  t.same(started.slice(2), [[2], [3], [4]], 'after the batch failed, each was tried alone');
  for (const i of [2, 3, 4]) await end(i);
  t.same(results, ['wrote 1', 'wrote 2', 'failed 3: cannot write 3', 'wrote 4'], 'the others were written; the one that cannot be fails with its own error');
  void submit(5);
  await settle();
  t.same(started.at(-1), [5], 'and the next item is written at once: the failed batch freed its place');
});

t.test('with retryAlone false, a batch that fails fails all its items with its error, none tried again', async (t) => {
  const { started, results, submit, end } = controlled({ concurrency: 1, maxBatch: 64, retryAlone: false }, (items) => items.some((i) => i.n === 3));
  void submit(1);
  for (const n of [2, 3, 4]) void submit(n);
  await settle();
  await end(0);
  await end(1);
  t.same(started, [[1], [2, 3, 4]], 'the batch was tried once');
  t.same(results, ['wrote 1', 'failed 2: cannot write 2,3,4', 'failed 3: cannot write 2,3,4', 'failed 4: cannot write 2,3,4']);
  void submit(5);
  await settle();
  t.same(started.at(-1), [5], 'and the next item is written at once');
});
