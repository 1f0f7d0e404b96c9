import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { BadRequestError, ServiceUnavailableError, PayloadTooLargeError, UnsupportedMediaTypeError } from '@agent-host/sdk';
import type { SpooledFile, UploadedFile } from '@agent-host/core';
import Busboy from 'busboy';
import { fileTypeFromFile } from 'file-type';
import mime from 'mime-types';
import type { Request, Response } from 'restify';

// Room for the multipart framing and small fields around the file.
const FRAMING_BYTES = 64 * 1024;

export interface UploadOptions {
  /** The form field holding the file. */
  field: string;
  maxBytes: number;
  /** Throws for a content type that will not be accepted (before the file is read, when its part declares one). */
  checkContentType(contentType: string): void;
}

// Types a client sends when it does not know better (curl -F for an unknown extension, some browsers).
const GENERIC_TYPES = new Set(['', 'application/octet-stream']);
const baseType = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

/**
 * The type an upload is stored and parsed as: the declared one, or, when the part declares none or only
 * `application/octet-stream`, the one its bytes (binary signatures) or else its file name say. A declared type
 * that the bytes contradict (a PDF declared as plain text) is refused: the parser chosen by the type would misread it.
 */
export async function uploadContentType(declared: string, filename: string, file: string): Promise<string> {
  // Read from the spooled file as far as the format needs (a zip's entries may lie past its first kilobytes).
  const detected = (await fileTypeFromFile(file))?.mime;
  if (GENERIC_TYPES.has(baseType(declared))) {
    const inferred = detected ?? (mime.lookup(filename) || undefined);
    if (!inferred)
      throw new UnsupportedMediaTypeError(
        `the type of "${filename}" cannot be told from its name or content; send it with a content type (curl: -F 'file=@${filename};type=...')`,
        { code: 'UNSUPPORTED_DOCUMENT_TYPE' },
      );
    return inferred;
  }
  if (detected && detected !== baseType(declared)) {
    throw new UnsupportedMediaTypeError(`"${filename}" is declared as ${baseType(declared)}, but its content is ${detected}`, {
      code: 'UNSUPPORTED_DOCUMENT_TYPE',
    });
  }
  return declared;
}

/** How many uploads an instance reads at once; one more is refused (503, `Retry-After`) rather than held in memory. */
export class UploadSlots {
  private taken = 0;

  constructor(private readonly max: number) {}

  async run<T>(res: Response, work: () => Promise<T>): Promise<T> {
    if (this.taken >= this.max) {
      res.header('retry-after', '5');
      throw new ServiceUnavailableError(`${this.max} uploads are being received already ([knowledge] upload_concurrency); retry in a few seconds`, {
        code: 'UPLOADS_BUSY',
      });
    }
    this.taken++;
    try {
      return await work();
    } finally {
      this.taken--;
    }
  }
}

/**
 * Reads one file from a `multipart/form-data` request into a temporary file,
 * hashing it on the way (never whole in memory), with its original filename
 * (UTF-8) and content type (see {@link uploadContentType}), and hands it to
 * `use`; the temporary file is removed afterwards. Over `maxBytes` is a 413, a
 * refused type the error of `checkContentType`; the rest of the body is read
 * and dropped so the connection stays usable.
 */
export async function withUpload<T>(req: Request, options: UploadOptions, use: (file: UploadedFile) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-upload-'));
  try {
    const target = path.join(dir, 'file');
    const file = await readPart(req, options, target);
    const contentType = await uploadContentType(file.contentType, file.filename, target);
    if (contentType !== file.contentType) options.checkContentType(contentType);
    return await use({ ...file, contentType });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Copies a part to `target` while hashing it. */
async function spool(stream: NodeJS.ReadableStream, target: string): Promise<SpooledFile> {
  const hash = createHash('sha256');
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      hash.update(chunk);
      done(null, chunk);
    },
  });
  await pipeline(stream, tap, createWriteStream(target, { mode: 0o600 }));
  return { path: target, size, sha256: hash.digest('hex') };
}

function readPart(req: Request, options: UploadOptions, target: string): Promise<UploadedFile> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    return Promise.reject(new UnsupportedMediaTypeError(`upload the file as multipart/form-data in the field "${options.field}"`));
  }
  const tooLarge = () => new PayloadTooLargeError(`the file is larger than the upload limit of ${options.maxBytes} bytes`, { code: 'UPLOAD_TOO_LARGE' });
  if (Number(req.headers['content-length']) > options.maxBytes + FRAMING_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    let busboy: Busboy.Busboy;
    try {
      busboy = Busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fileSize: options.maxBytes, fields: 20 } });
    } catch (error) {
      reject(new BadRequestError(`malformed multipart request: ${(error as Error).message}`));
      return;
    }
    let stored: Promise<UploadedFile | undefined> = Promise.resolve(undefined);
    let failure: Error | undefined;
    busboy.on('file', (name, stream, info) => {
      if (name !== options.field || failure) return void stream.resume();
      try {
        if (!GENERIC_TYPES.has(baseType(info.mimeType))) options.checkContentType(info.mimeType);
      } catch (error) {
        failure = error as Error;
        return void stream.resume();
      }
      stream.on('limit', () => (failure = tooLarge()));
      stored = spool(stream, target).then((spooled) => ({ filename: info.filename ?? '', contentType: info.mimeType, data: spooled }));
      // Settled when busboy closes; until then a failed write must not count as an unhandled rejection.
      stored.catch(() => undefined);
    });
    busboy.on('error', (error: Error) => reject(new BadRequestError(`malformed multipart request: ${error.message}`)));
    busboy.on('close', () => {
      stored.then((read) => {
        if (failure) reject(failure);
        else if (read) resolve(read);
        else reject(new BadRequestError(`no file in the form field "${options.field}"`));
      }, reject);
    });
    req.pipe(busboy);
  });
}
