import yauzl from 'yauzl';

/** How much a zip container (DOCX and the other Office formats) may hold once inflated. */
export interface ZipLimits {
  maxEntries: number;
  maxUncompressedBytes: number;
  /** Largest inflated/compressed ratio of an entry over 1 MB inflated (a zip bomb's is in the hundreds). */
  maxRatio: number;
}

const RATIO_FLOOR_BYTES = 1024 * 1024;

/** Why a container is refused: over a limit (`key` names it) or unreadable. */
export interface ZipRefusal {
  reason: string;
  key?: 'zip_max_entries' | 'zip_max_uncompressed_mb' | 'zip_max_ratio';
}

/**
 * Why `data` is refused, or `undefined`: a streaming zip reader inflates every entry once, counting entries, bytes
 * and ratios, before the format's parser loads the document whole. The bytes counted are those actually inflated,
 * not what the headers claim (yauzl also fails an entry that inflates past its declared size).
 */
export async function zipRefusal(data: Uint8Array, limits: ZipLimits): Promise<ZipRefusal | undefined> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.fromBufferPromise(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { lazyEntries: true });
  } catch (error) {
    return { reason: `not a zip container (${(error as Error).message})` };
  }
  try {
    if (zip.entryCount > limits.maxEntries) return { reason: `it holds ${zip.entryCount} files (limit ${limits.maxEntries})`, key: 'zip_max_entries' };
    let total = 0;
    for await (const entry of zip.eachEntry()) {
      const ratio = entry.uncompressedSize / Math.max(entry.compressedSize, 1);
      if (entry.uncompressedSize > RATIO_FLOOR_BYTES && ratio > limits.maxRatio) {
        return { reason: `${entry.fileName} inflates ${Math.round(ratio)} times (limit ${limits.maxRatio})`, key: 'zip_max_ratio' };
      }
      if (entry.fileName.endsWith('/')) continue;
      const stream = await zip.openReadStreamPromise(entry);
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (total > limits.maxUncompressedBytes) {
          stream.destroy();
          return { reason: `it inflates to more than ${limits.maxUncompressedBytes} bytes`, key: 'zip_max_uncompressed_mb' };
        }
      }
    }
    return undefined;
  } catch (error) {
    return { reason: `a damaged or inconsistent zip container (${(error as Error).message})` };
  } finally {
    zip.close();
  }
}
