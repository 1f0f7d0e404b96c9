import t from 'tap';
import { WriteBehind } from '../../core/src/db/write-behind.js';

/** Lets pending promise callbacks and immediates run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

t.test('rows are written a batch at a time: when a batch fills, or after the delay, in order and one write at a time', async (t) => {
  // Each write waits until the test ends it, so what runs at once is seen without timing.
  const started: number[][] = [];
  const ends: (() => void)[] = [];
  const behind = new WriteBehind<number>(
    (rows) => {
      started.push(rows);
      return new Promise<void>((resolve) => ends.push(resolve));
    },
    { batchSize: 3, maxDelayMs: 20, onError: (error) => t.fail(String(error)) },
  );
  for (const n of [1, 2, 3, 4, 5, 6, 7]) behind.add(n);
  await settle();
  t.same(started, [[1, 2, 3]], 'a full batch is written at once, and the next full one waits for it');
  ends[0]!();
  await settle();
  t.same(
    started,
    [
      [1, 2, 3],
      [4, 5, 6],
    ],
    'then the next one is written',
  );
  ends[1]!();
  const deadline = Date.now() + 5_000;
  while (started.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  t.same(started.at(-1), [7], 'the last row is written after the delay, without a drain');
  ends[2]!();
  behind.add(8);
  const drained = behind.drain();
  await settle();
  t.same(started.at(-1), [8], 'drain writes what waits');
  let done = false;
  void drained.then(() => (done = true));
  await settle();
  t.notOk(done, 'and resolves only once it is written');
  ends[3]!();
  await drained;
});

t.test('a failed write is reported with its rows unwritten, and later rows are still written', async (t) => {
  const written: string[] = [];
  const failed: unknown[] = [];
  const behind = new WriteBehind<string>(
    async (rows) => {
      if (rows.includes('bad')) throw new Error('the database refused');
      written.push(...rows);
    },
    { batchSize: 2, maxDelayMs: 1_000, onError: (error) => failed.push(error) },
  );
  behind.add('bad');
  behind.add('lost with it');
  behind.add('kept');
  await behind.drain();
  t.same(written, ['kept']);
  t.match(failed, [{ message: 'the database refused' }]);
});
