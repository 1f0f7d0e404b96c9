import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BadRequestError, NotFoundError, type ObjectStore } from '@agent-host/sdk';

const META = '.meta.json';

/**
 * Objects as files under one directory. Keys are relative paths; a key that
 * would leave the directory is refused. Downloads go through the host's
 * same-origin proxy, since a directory has no public URL.
 */
export function createLocalObjectStore(root: string): ObjectStore {
  const base = path.resolve(root);
  const fileOf = (key: string) => {
    const file = path.resolve(base, key);
    if (key === '' || path.isAbsolute(key) || !file.startsWith(base + path.sep) || file.endsWith(META)) {
      throw new BadRequestError(`invalid object key "${key}"`);
    }
    return file;
  };
  const readInfo = async (key: string, file: string) => {
    const meta = existsSync(file + META) ? (JSON.parse(await readFile(file + META, 'utf8')) as { content_type: string }) : undefined;
    return { key, size: (await stat(file)).size, content_type: meta?.content_type ?? 'application/octet-stream' };
  };
  return {
    async put(key, data, { contentType }) {
      const file = fileOf(key);
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, data);
      await writeFile(file + META, JSON.stringify({ content_type: contentType }));
      return { key, size: data.byteLength, content_type: contentType };
    },
    async get(key) {
      const file = fileOf(key);
      if (!existsSync(file)) throw new NotFoundError(`object "${key}" not found`);
      return { data: await readFile(file), info: await readInfo(key, file) };
    },
    async delete(key) {
      const file = fileOf(key);
      await rm(file, { force: true });
      await rm(file + META, { force: true });
    },
    async exists(key) {
      return existsSync(fileOf(key));
    },
    async describeDownload(key) {
      fileOf(key);
      return {
        download_url: `/object-store/objects/${key.split('/').map(encodeURIComponent).join('/')}`,
        download_mode: 'object_store_proxy',
        download_warning: 'the local object store has no public endpoint; the file is served through the host',
      };
    },
  };
}
