// A source CSV's parsed records (core/src/etl/parsed-records.ts): what the check at upload parsed, read back by the
// conversion record for record (in batches), whatever the fields hold and wherever the bytes are cut.
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import t from 'tap';
import { parsedRecordsReader, parsedRecordsWriter } from '../../core/src/etl/parsed-records.js';
import { checkSourceCsv } from '../../core/src/etl/source-csv.js';

const RECORDS = [
  ['Name', 'Note', 'Count'],
  ['Hopper, Grace', 'two\nlines', '3'],
  ['', '', ''],
  ['Zoë 🌍', '=HYPERLINK("x")', '12'],
  ['"quoted"', '0', ''],
  [''],
  ['a'.repeat(200_000), 'long', '1'],
];

const collect = async (source: Readable, batches: string[][][] = []) => {
  const records: string[][] = [];
  await pipeline(
    source,
    parsedRecordsReader(),
    new Writable({
      objectMode: true,
      write(batch: string[][], _encoding, next) {
        batches.push(batch);
        records.push(...batch);
        next();
      },
    }),
  );
  return records;
};

const encode = async (records: string[][]) => {
  const chunks: Buffer[] = [];
  await pipeline(
    Readable.from(records),
    parsedRecordsWriter(),
    new Writable({
      write(chunk: Buffer, _encoding, next) {
        chunks.push(Buffer.from(chunk));
        next();
      },
    }),
  );
  return Buffer.concat(chunks);
};

t.test('records come back as they were written, cut into chunks anywhere', async (t) => {
  const bytes = await encode(RECORDS);
  t.same(await collect(Readable.from([bytes])), RECORDS, 'in one chunk');
  for (const size of [1, 2, 3, 7, 64, 4096]) {
    const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
    t.same(await collect(Readable.from(chunks)), RECORDS, `in chunks of ${size} bytes (multi-byte characters cut too)`);
  }
});

t.test('the whole records of a chunk come as one batch, so a conversion pays the stream once per chunk', async (t) => {
  const batches: string[][][] = [];
  const bytes = await encode(RECORDS);
  const cut = (await encode(RECORDS.slice(0, 3))).length + 1;
  await collect(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]), batches);
  t.same(
    batches.map((b) => b.length),
    [3, RECORDS.length - 3],
    'the first chunk holds three whole records and a byte of the fourth; the rest come in the second batch',
  );
});

t.test('input that ends inside a record is an error, not a short record', async (t) => {
  const bytes = await encode([['a', 'b']]);
  await t.rejects(collect(Readable.from([bytes.subarray(0, bytes.length - 1)])), /end in the middle of a record/);
  await t.rejects(collect(Readable.from([bytes.subarray(0, 3)])), /end in the middle of a record/);
});

t.test('the check at upload writes the records it parsed, header first, which read back as the CSV parses', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'etl-records-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const csv = path.join(dir, 'source.csv');
  await writeFile(csv, '\ufeffName,Note,Count\r\n"Hopper, Grace","two\nlines",3\r\n\r\n,,\r\nZoë 🌍,=HYPERLINK("x"),12\r\n');
  const records = path.join(dir, 'records');
  const summary = await checkSourceCsv(csv, 1, records);
  t.same(summary, { columns: ['Name', 'Note', 'Count'], sample: [['Hopper, Grace', 'two\nlines', '3']], rows: 3 });
  t.same(await collect(createReadStream(records)), [
    ['Name', 'Note', 'Count'],
    ['Hopper, Grace', 'two\nlines', '3'],
    ['', '', ''],
    ['Zoë 🌍', '=HYPERLINK("x")', '12'],
  ]);
});
