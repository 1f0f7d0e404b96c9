// Uploads are spooled to a temporary file while they are hashed, never gathered in memory, and an instance receives
// at most [knowledge] upload_concurrency of them at once.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource } from '../helpers/knowledge.js';
import { query } from '../helpers/services.js';

const BOUNDARY = 'agent-host-test-boundary';
const CHUNK = 64 * 1024;

/**
 * A multipart body streamed from `chunks` text chunks of 64 KB, produced as the server reads them; `gate` holds the
 * last chunk back until it resolves.
 */
function multipart(
  filename: string,
  chunks: number,
  gate: Promise<void> = Promise.resolve(),
): { body: ReadableStream<Uint8Array>; sha256: string; size: number } {
  const encoder = new TextEncoder();
  const chunkOf = (i: number) => encoder.encode(`${String(i).padStart(8, '0')} ${'x'.repeat(CHUNK - 10)}\n`);
  const hash = createHash('sha256');
  for (let i = 0; i < chunks; i++) hash.update(chunkOf(i));
  let i = -1;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i === -1)
        controller.enqueue(
          encoder.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n`),
        );
      else if (i < chunks) {
        if (i === chunks - 1) await gate;
        controller.enqueue(chunkOf(i));
      } else {
        controller.enqueue(encoder.encode(`\r\n--${BOUNDARY}--\r\n`));
        controller.close();
      }
      i++;
    },
  });
  return { body, sha256: hash.digest('hex'), size: chunks * CHUNK };
}

async function send(admin: AdminClient, sourceId: string, body: ReadableStream<Uint8Array>) {
  const pathname = `/knowledge-sources/${sourceId}/documents`;
  const response = await fetch(admin.baseUrl + pathname, {
    method: 'POST',
    headers: { cookie: admin.cookieHeader(pathname), 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
    body,
    duplex: 'half',
  } as RequestInit);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
}

// Garbage counts in arrayBuffers until collected: each sample is taken after a full collection, so it is what is live.
// The collection frees array buffers on a background thread unless told not to; on a busy machine that thread lags
// and buffers already dead still count, so they are swept within the collection here.
v8.setFlagsFromString('--expose-gc');
v8.setFlagsFromString('--no-concurrent-array-buffer-sweeping');
const gc = vm.runInNewContext('gc') as () => void;

// The hosts run in this process: their uploads spool in a directory of this file's own (`os.tmpdir()` reads TMPDIR on
// each call), where no upload of another test file running meanwhile appears (CI failed when one was still there).
const ownTmp = await mkdtemp(path.join(os.tmpdir(), 'upload-streaming-'));
process.env.TMPDIR = ownTmp;
t.teardown(() => rm(ownTmp, { recursive: true, force: true }));

const spools = async () => (await readdir(os.tmpdir())).filter((name) => name.startsWith('agent-host-upload-'));

t.test('a 40 MB upload is spooled to disk and hashed on the way: memory grows by a fraction of it', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'upload-test-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const data = Buffer.alloc(40 * 1024 * 1024, 'All work and no play. ');
  const sha256 = createHash('sha256').update(data).digest('hex');
  await writeFile(path.join(dir, 'big.txt'), data);
  const before = await spools();
  // The host runs in this process and the client (curl, 8 MB/s, so the upload lasts 5 s) in another: every buffer
  // this process holds is the host's.
  gc();
  const baseline = process.memoryUsage().arrayBuffers;
  let peak = baseline;
  let samples = 0;
  let spooled = false;
  // Each sample waits at least as long as its collection took: on a loaded machine a full collection can take longer
  // than the interval, and back to back they left the host too little time to read the upload (608 samples, 220 s).
  let sampler: NodeJS.Timeout | undefined;
  const sample = () => {
    const started = performance.now();
    gc();
    samples++;
    peak = Math.max(peak, process.memoryUsage().arrayBuffers);
    void spools().then((now) => (spooled ||= now.length > before.length));
    sampler = setTimeout(sample, Math.max(250, performance.now() - started));
  };
  sampler = setTimeout(sample, 250);
  const pathname = `/knowledge-sources/${source.source_id}/documents`;
  const curl = [
    '-s',
    '--limit-rate',
    '8M',
    '-H',
    `cookie: ${admin.cookieHeader(pathname)}`,
    '-F',
    `file=@${path.join(dir, 'big.txt')};type=text/plain`,
    admin.baseUrl + pathname,
  ];
  const output = await new Promise<string>((resolve, reject) => execFile('curl', curl, (error, stdout) => (error ? reject(error) : resolve(stdout))));
  clearTimeout(sampler);
  const created = JSON.parse(output);
  t.equal(created.size_bytes, data.length, `all ${data.length} bytes stored`);
  const [row] = await query<{ sha256: string }>(host.databaseUrl, 'SELECT sha256 FROM knowledge_documents WHERE id = $1', [created.document_id]);
  t.equal(row?.sha256, sha256, 'the hash taken on the way is the hash of the bytes');
  const download = await fetch(host.url + created.download_url, { headers: { cookie: admin.cookieHeader('/') } });
  t.equal(
    createHash('sha256')
      .update(Buffer.from(await download.arrayBuffer()))
      .digest('hex'),
    sha256,
    'and the stored object holds them',
  );
  t.ok(spooled, 'the upload went through a temporary file');
  t.same(await spools(), before, 'which is gone afterwards');
  const growthMb = (peak - baseline) / 1024 / 1024;
  t.ok(samples >= 5, `memory was sampled throughout (${samples} samples)`);
  t.ok(growthMb < 8, `the host's live buffers grew by ${growthMb.toFixed(1)} MB at most while 40 MB arrived (gathering it takes 40-80 MB)`);
});

t.test('past upload_concurrency an upload is refused with 503 and Retry-After, and the next one after is received', async (t) => {
  const host = await startTestHost(t, { env: { AGENT_HOST__KNOWLEDGE__UPLOAD_CONCURRENCY: '1' } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin);
  let release!: () => void;
  const first = multipart('first.txt', 4, new Promise((resolve) => (release = resolve)));
  const existing = new Set(await spools());
  const firstSent = send(admin, source.source_id, first.body);
  // The first upload is being received once its temporary file holds two of the three chunks sent before the gate (the
  // parser may hold back the tail of the third while it looks for the boundary). Other test files upload at the same
  // time, so any other temporary file proves nothing.
  const receiving = async () => {
    for (const dir of await spools()) {
      if (existing.has(dir)) continue;
      const file = path.join(os.tmpdir(), dir, 'file');
      const size = await stat(file).then(
        (s) => s.size,
        () => 0,
      );
      if (size >= 2 * CHUNK && (await readFile(file, { encoding: 'utf8' }).catch(() => '')).startsWith('00000000 ')) return true;
    }
    return false;
  };
  const before = Date.now();
  while (!(await receiving()) && Date.now() - before < 10_000) await new Promise((r) => setTimeout(r, 20));
  const second = await send(admin, source.source_id, multipart('second.txt', 1).body);
  t.equal(second.status, 503, 'one upload at a time');
  t.equal(second.retryAfter, '5');
  t.match(second.body.detail, /1 uploads are being received already \(\[knowledge\] upload_concurrency\); retry in a few seconds/);
  release();
  t.equal((await firstSent).status, 201, 'the first one is stored');
  t.equal((await send(admin, source.source_id, multipart('third.txt', 1).body)).status, 201, 'and the slot is free again');
});
