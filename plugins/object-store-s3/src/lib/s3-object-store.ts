import { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  assertObjectKey,
  attachmentDisposition,
  NotFoundError,
  objectKeyFilename,
  objectStoreProxyDownload,
  type Logger,
  type ObjectStoreBackend,
} from '@agent-host/sdk';

export interface S3ObjectStoreOptions {
  /** Reads and writes, against the endpoint the host reaches. */
  client: S3Client;
  /** Signs download URLs against the public endpoint; absent, downloads go through the host's proxy. */
  publicClient?: S3Client;
  bucket: string;
  /** Lifetime of a presigned download URL. */
  presignTtlSeconds: number;
  log: Logger;
}

export const NO_PUBLIC_ENDPOINT_WARNING = 'OBJECT_STORE_PUBLIC_ENDPOINT is not set; the file is served through the host';
export const PRESIGN_FAILED_WARNING = 'presigning a public download URL failed; the file is served through the host';

const isMissing = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

/** An S3 bucket as an object store backend: keys are object keys, checked by the same rule as every backend's. */
export function createS3ObjectStore(options: S3ObjectStoreOptions): ObjectStoreBackend {
  const { client, publicClient, bucket, presignTtlSeconds, log } = options;

  const getObject = async (key: string) => {
    assertObjectKey(key);
    try {
      const response = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!response.Body) throw new Error(`GetObject returned no body for "${key}"`);
      return { body: response.Body, info: { key, size: response.ContentLength ?? 0, content_type: response.ContentType ?? 'application/octet-stream' } };
    } catch (error) {
      if (isMissing(error)) throw new NotFoundError(`object "${key}" not found`, { code: 'OBJECT_NOT_FOUND' });
      throw error;
    }
  };

  const putObject = async (key: string, body: Uint8Array | Readable, contentType: string, size: number) => {
    assertObjectKey(key);
    // Stored with the object, the disposition comes back on every GET, presigned downloads included. (A signed
    // response-content-disposition would also cover older objects, but S3-compatible servers disagree on how its
    // quotes and asterisk are encoded when they check the signature.)
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        ContentDisposition: attachmentDisposition(objectKeyFilename(key)),
        ContentLength: size,
      }),
    );
    return { key, size, content_type: contentType };
  };

  return {
    put(key, data, { contentType }) {
      return putObject(key, data, contentType, data.byteLength);
    },
    putStream(key, body, { contentType, size }) {
      return putObject(key, Readable.from(body), contentType, size);
    },
    async get(key) {
      const { body, info } = await getObject(key);
      return { data: await body.transformToByteArray(), info };
    },
    async open(key) {
      const { body, info } = await getObject(key);
      // The body is the fetch response's ReadableStream (see s3-clients.ts), an async iterable of bytes.
      return { body: body as unknown as AsyncIterable<Uint8Array>, info };
    },
    async delete(key) {
      assertObjectKey(key);
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
    async exists(key) {
      assertObjectKey(key);
      try {
        await client.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
        return true;
      } catch (error) {
        if (isMissing(error)) return false;
        throw error;
      }
    },
    async describeDownload(key) {
      assertObjectKey(key);
      if (!publicClient) return objectStoreProxyDownload(key, NO_PUBLIC_ENDPOINT_WARNING);
      try {
        const url = await getSignedUrl(publicClient, new GetObjectCommand({ Bucket: bucket, Key: key }), { expiresIn: presignTtlSeconds });
        return { download_url: url, download_mode: 'presigned_url', download_warning: null };
      } catch (error) {
        log.warn({ err: error, key }, 'presigning a download URL failed; the host proxy serves it');
        return objectStoreProxyDownload(key, PRESIGN_FAILED_WARNING);
      }
    },
  };
}
