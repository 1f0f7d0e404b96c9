import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { assertObjectKey, BadRequestError, NotFoundError, objectStoreProxyDownload, type ObjectStoreBackend } from '@agent-host/sdk';

const META = '.meta.json';

/**
 * Objects as files under one directory. Keys are relative paths; a key that
 * would leave the directory is refused. Downloads go through the host's
 * same-origin proxy, since a directory has no public URL.
 */
export function createLocalObjectStore(root: string): ObjectStoreBackend {
  const base = path.resolve(root);
  const fileOf = (key: string) => {
    assertObjectKey(key);
    const file = path.resolve(base, key);
    // The key rule already keeps keys inside; this also guards the sidecar files.
    if (!file.startsWith(base + path.sep) || file.endsWith(META))
      throw new BadRequestError(`invalid object key ${JSON.stringify(key)}`, { code: 'OBJECT_KEY_INVALID' });
    return file;
  };
  const readInfo = async (key: string, file: string) => {
    const meta = existsSync(file + META) ? (JSON.parse(await readFile(file + META, 'utf8')) as { content_type: string }) : undefined;
    return { key, size: (await stat(file)).size, content_type: meta?.content_type ?? 'application/octet-stream' };
  };
  // A key naming a directory (the prefix of other keys) is no object.
  const isFile = (file: string) =>
    stat(file).then(
      (s) => s.isFile(),
      () => false,
    );
  const existing = async (key: string) => {
    const file = fileOf(key);
    if (!(await isFile(file))) throw new NotFoundError(`object "${key}" not found`, { code: 'OBJECT_NOT_FOUND' });
    return file;
  };
  return {
    async put(key, data, { contentType }) {
      const file = fileOf(key);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, data);
      await writeFile(file + META, JSON.stringify({ content_type: contentType }));
      return { key, size: data.byteLength, content_type: contentType };
    },
    async putStream(key, body, { contentType, size }) {
      const file = fileOf(key);
      await mkdir(path.dirname(file), { recursive: true });
      // Written beside the target and renamed, so a reader never sees half a file.
      const partial = `${file}.${randomBytes(6).toString('hex')}.partial`;
      try {
        await pipeline(body, createWriteStream(partial));
        const written = (await stat(partial)).size;
        if (written !== size) throw new Error(`object "${key}": ${written} bytes arrived, ${size} were announced`);
        await rename(partial, file);
      } catch (error) {
        await rm(partial, { force: true });
        throw error;
      }
      await writeFile(file + META, JSON.stringify({ content_type: contentType }));
      return { key, size, content_type: contentType };
    },
    async get(key) {
      const file = await existing(key);
      return { data: await readFile(file), info: await readInfo(key, file) };
    },
    async open(key) {
      const file = await existing(key);
      const info = await readInfo(key, file);
      return { body: createReadStream(file), info };
    },
    async delete(key) {
      const file = fileOf(key);
      await rm(file, { force: true });
      await rm(file + META, { force: true });
    },
    async exists(key) {
      return isFile(fileOf(key));
    },
    async describeDownload(key) {
      fileOf(key);
      return objectStoreProxyDownload(key, 'the local object store has no public endpoint; the file is served through the host');
    },
  };
}
