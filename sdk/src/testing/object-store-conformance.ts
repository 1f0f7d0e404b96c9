import { randomUUID } from 'node:crypto';
import { BadRequestError, NotFoundError } from '../errors.js';
import type { ObjectStoreBackend } from '../extensions/object-stores.js';
import { conformanceRule, rejectionOf, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'object store';
const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

async function gather(body: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) out.set(chunk, (at += chunk.byteLength) - chunk.byteLength);
  return out;
}

/**
 * What every {@link ObjectStoreBackend} must do: give back the bytes and content type it stored (by `get`, `open`
 * and, when it has one, `putStream`), replace on a second `put`, say what exists, delete (a missing key too), answer a
 * missing key with `NotFoundError`, refuse keys that could escape the store with `BadRequestError`, and describe a
 * download. Each rule writes under `<prefix><random>/`.
 * @public
 */
export function objectStoreConformance(store: ObjectStoreBackend, options: { keyPrefix?: string } = {}): ConformanceRule[] {
  const key = (name: string) => `${options.keyPrefix ?? 'conformance/'}${randomUUID()}/${name}`;
  return [
    conformanceRule(SUITE, 'put() then get() and open() give back the bytes, size and content type, whatever the name', async (fail: Fail) => {
      const k = key('rapport été #1.txt');
      const info = await store.put(k, bytes('Parcels ship within two days.'), { contentType: 'text/plain' });
      if (info.key !== k || info.size !== 29 || info.content_type !== 'text/plain') fail(`put() answered ${JSON.stringify(info)}`);
      const got = await store.get(k);
      if (text(got.data) !== 'Parcels ship within two days.') fail(`get() gave ${JSON.stringify(text(got.data))}`);
      if (got.info.size !== 29 || !got.info.content_type.startsWith('text/plain')) fail(`get() described it as ${JSON.stringify(got.info)}`);
      const opened = await store.open(k);
      if (text(await gather(opened.body)) !== 'Parcels ship within two days.') fail('open() streamed other bytes');
    }),
    conformanceRule(SUITE, 'a second put() of a key replaces the object', async (fail: Fail) => {
      const k = key('doc.bin');
      await store.put(k, bytes('first'), { contentType: 'application/octet-stream' });
      await store.put(k, bytes('second version'), { contentType: 'application/pdf' });
      const got = await store.get(k);
      if (text(got.data) !== 'second version' || got.info.content_type !== 'application/pdf')
        fail(`get() after the second put gave ${JSON.stringify({ data: text(got.data), info: got.info })}`);
    }),
    conformanceRule(SUITE, 'putStream(), when the backend has it, stores the streamed bytes', async (fail: Fail) => {
      if (!store.putStream) return;
      const k = key('streamed.txt');
      async function* body() {
        for (const part of ['Parcels ', 'ship ', 'within two days.']) yield bytes(part);
      }
      const info = await store.putStream(k, body(), { contentType: 'text/plain', size: 29 });
      if (info.size !== 29) fail(`putStream() answered size ${info.size}, not 29`);
      if (text((await store.get(k)).data) !== 'Parcels ship within two days.') fail('get() after putStream() gave other bytes');
    }),
    conformanceRule(SUITE, 'exists() and delete() agree: deleting removes, and deleting a missing key is no error', async (fail: Fail) => {
      const k = key('to-delete.txt');
      if (await store.exists(k)) fail('a key never written exists');
      await store.put(k, bytes('x'), { contentType: 'text/plain' });
      if (!(await store.exists(k))) fail('a stored key does not exist');
      await store.delete(k);
      if (await store.exists(k)) fail('a deleted key still exists');
      await store.delete(k);
    }),
    conformanceRule(SUITE, 'a missing key is a NotFoundError for get() and open()', async (fail: Fail) => {
      const k = key('never-written.txt');
      for (const [name, attempt] of [
        ['get', () => store.get(k)],
        ['open', () => store.open(k)],
      ] as const) {
        const error = await rejectionOf(attempt());
        if (!(error instanceof NotFoundError))
          fail(`${name}() of a missing key ${error === undefined ? 'resolved' : `rejected with ${String(error)}`}, not a NotFoundError`);
      }
    }),
    conformanceRule(SUITE, 'a key that could escape the store is refused with BadRequestError', async (fail: Fail) => {
      for (const bad of ['../outside.txt', '/absolute.txt', 'a//b.txt', 'a/./b.txt', 'back\\slash.txt']) {
        const error = await rejectionOf(store.put(bad, bytes('x'), { contentType: 'text/plain' }));
        if (!(error instanceof BadRequestError))
          fail(`put(${JSON.stringify(bad)}) ${error === undefined ? 'was stored' : `rejected with ${String(error)}`}, not a BadRequestError`);
      }
    }),
    conformanceRule(SUITE, 'describeDownload() gives a presigned URL or the proxy, with a warning for the proxy', async (fail: Fail) => {
      const k = key('download.txt');
      await store.put(k, bytes('x'), { contentType: 'text/plain' });
      const download = await store.describeDownload(k);
      if (download.download_mode === 'presigned_url') {
        if (!download.download_url || !/^https?:\/\//.test(download.download_url))
          fail(`a presigned download has URL ${JSON.stringify(download.download_url)}`);
      } else if (download.download_mode === 'object_store_proxy') {
        if (!download.download_url || !download.download_warning)
          fail(`a proxy download is ${JSON.stringify(download)}: it needs the proxy path and the reason`);
      } else fail(`download_mode is ${JSON.stringify((download as { download_mode: unknown }).download_mode)}`);
    }),
  ];
}
