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
  return withForm(
    req,
    { maxFileBytes: options.maxBytes, maxFiles: 1, maxFields: 20, fileFields: [options.field], checkContentType: (_, type) => options.checkContentType(type) },
    async ({ files }) => {
      const file = files[0];
      if (!file) throw new BadRequestError(`no file in the form field "${options.field}"`);
      return use(file);
    },
  );
}

/** A file part of a form, spooled to disk, under the name of its form field. */
export type FormFile = UploadedFile & { field: string; data: SpooledFile };

export interface FormLimits {
  /** The largest file part; a larger one is a 413 naming its field. */
  maxFileBytes: number;
  maxFiles: number;
  maxFields: number;
  /** When given, file parts in other fields are dropped unread. */
  fileFields?: readonly string[];
  /** Throws for a content type that will not be accepted (before the file is read, when its part declares one). */
  checkContentType?(field: string, contentType: string): void;
}

/**
 * Reads a `multipart/form-data` request: its text fields, and its files spooled to a temporary folder (hashed on the
 * way, never whole in memory, each typed by {@link uploadContentType}); hands them to `use` and removes the files
 * afterwards. A file over `maxFileBytes` is a 413, a refused type the error of `checkContentType`; the rest of the
 * body is read and dropped so the connection stays usable.
 */
export async function withForm<T>(
  req: Request,
  limits: FormLimits,
  use: (form: { fields: Record<string, string>; files: FormFile[] }) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-upload-'));
  try {
    const form = await readForm(req, limits, dir);
    for (const file of form.files) {
      const contentType = await uploadContentType(file.contentType, file.filename, file.data.path);
      if (contentType !== file.contentType) limits.checkContentType?.(file.field, contentType);
      file.contentType = contentType;
    }
    return await use(form);
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

function readForm(req: Request, limits: FormLimits, dir: string): Promise<{ fields: Record<string, string>; files: FormFile[] }> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    const what = limits.fileFields?.length === 1 ? `the file as multipart/form-data in the field "${limits.fileFields[0]}"` : 'the form as multipart/form-data';
    return Promise.reject(new UnsupportedMediaTypeError(`upload ${what}`));
  }
  const tooLarge = (field: string) =>
    new PayloadTooLargeError(`the file in "${field}" is larger than the upload limit of ${limits.maxFileBytes} bytes`, { code: 'UPLOAD_TOO_LARGE' });
  if (Number(req.headers['content-length']) > limits.maxFileBytes * limits.maxFiles + FRAMING_BYTES)
    return Promise.reject(tooLarge(limits.fileFields?.[0] ?? 'the form'));
  return new Promise((resolve, reject) => {
    let busboy: Busboy.Busboy;
    try {
      busboy = Busboy({
        headers: req.headers,
        defParamCharset: 'utf8',
        limits: { files: limits.maxFiles, fileSize: limits.maxFileBytes, fields: limits.maxFields, fieldSize: 1024 * 1024 },
      });
    } catch (error) {
      reject(new BadRequestError(`malformed multipart request: ${(error as Error).message}`));
      return;
    }
    const fields: Record<string, string> = {};
    const stored: Promise<FormFile>[] = [];
    let failure: Error | undefined;
    busboy.on('field', (name, value) => {
      if (name in fields) failure ??= new BadRequestError(`the form field "${name}" is given more than once`);
      fields[name] = value;
    });
    busboy.on('file', (name, stream, info) => {
      if ((limits.fileFields && !limits.fileFields.includes(name)) || failure) return void stream.resume();
      try {
        if (!GENERIC_TYPES.has(baseType(info.mimeType))) limits.checkContentType?.(name, info.mimeType);
      } catch (error) {
        failure = error as Error;
        return void stream.resume();
      }
      stream.on('limit', () => (failure ??= tooLarge(name)));
      const file = spool(stream, path.join(dir, `file-${stored.length}`)).then((data) => ({
        field: name,
        filename: info.filename ?? '',
        contentType: info.mimeType,
        data,
      }));
      // Settled when busboy closes; until then a failed write must not count as an unhandled rejection.
      file.catch(() => undefined);
      stored.push(file);
    });
    busboy.on('error', (error: Error) => reject(new BadRequestError(`malformed multipart request: ${error.message}`)));
    busboy.on('close', () => {
      Promise.all(stored).then((files) => (failure ? reject(failure) : resolve({ fields, files })), reject);
    });
    req.pipe(busboy);
  });
}
