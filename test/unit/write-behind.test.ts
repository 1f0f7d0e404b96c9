import t from 'tap';
import { WriteBehind } from '../../core/src/db/write-behind.js';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('rows are written a batch at a time: when a batch fills, or after the delay, in order and one write at a time', async (t) => {
  const writes: number[][] = [];
  let writing = 0;
  let overlapped = false;
  const behind = new WriteBehind<number>(
    async (rows) => {
      overlapped ||= writing > 0;
      writing++;
      await tick(5);
      writes.push(rows);
      writing--;
    },
    { batchSize: 3, maxDelayMs: 40, onError: (error) => t.fail(String(error)) },
  );
  for (const n of [1, 2, 3, 4, 5, 6, 7]) behind.add(n);
  await tick(15);
  t.same(
    writes,
    [
      [1, 2, 3],
      [4, 5, 6],
    ],
    'two full batches are written at once, the seventh row waits',
  );
  await tick(60);
  t.same(writes.at(-1), [7], 'the last row is written after the delay, without a drain');
  behind.add(8);
  await behind.drain();
  t.same(writes, [[1, 2, 3], [4, 5, 6], [7], [8]], 'drain writes what waits and resolves once it is written');
  t.notOk(overlapped, 'never two writes at once');
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
