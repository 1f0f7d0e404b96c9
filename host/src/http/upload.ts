import { BadRequestError, PayloadTooLargeError, UnsupportedMediaTypeError } from '@agent-host/sdk';
import type { UploadedFile } from '@agent-host/core';
import Busboy from 'busboy';
import { fileTypeFromBuffer } from 'file-type';
import mime from 'mime-types';
import type { Request } from 'restify';

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
export async function uploadContentType(declared: string, filename: string, data: Uint8Array): Promise<string> {
  const detected = (await fileTypeFromBuffer(data))?.mime;
  if (GENERIC_TYPES.has(baseType(declared))) {
    const inferred = detected ?? (mime.lookup(filename) || undefined);
    if (!inferred) throw new UnsupportedMediaTypeError(`the type of "${filename}" cannot be told from its name or content; send it with a content type (curl: -F 'file=@${filename};type=...')`);
    return inferred;
  }
  if (detected && detected !== baseType(declared)) {
    throw new UnsupportedMediaTypeError(`"${filename}" is declared as ${baseType(declared)}, but its content is ${detected}`);
  }
  return declared;
}

/**
 * Reads one file from a `multipart/form-data` request, streaming, with its
 * original filename (UTF-8) and content type (see {@link uploadContentType}).
 * Over `maxBytes` is a 413, a refused type the error of `checkContentType`;
 * the rest of the body is read and dropped so the connection stays usable.
 */
export async function readUpload(req: Request, options: UploadOptions): Promise<UploadedFile> {
  const file = await readPart(req, options);
  const contentType = await uploadContentType(file.contentType, file.filename, file.data);
  if (contentType !== file.contentType) options.checkContentType(contentType);
  return { ...file, contentType };
}

function readPart(req: Request, options: UploadOptions): Promise<UploadedFile> {
  if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) {
    return Promise.reject(new UnsupportedMediaTypeError(`upload the file as multipart/form-data in the field "${options.field}"`));
  }
  const tooLarge = () => new PayloadTooLargeError(`the file is larger than the upload limit of ${options.maxBytes} bytes`);
  if (Number(req.headers['content-length']) > options.maxBytes + FRAMING_BYTES) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    let busboy: Busboy.Busboy;
    try {
      busboy = Busboy({ headers: req.headers, defParamCharset: 'utf8', limits: { files: 1, fileSize: options.maxBytes, fields: 20 } });
    } catch (error) {
      reject(new BadRequestError(`malformed multipart request: ${(error as Error).message}`));
      return;
    }
    let file: UploadedFile | undefined;
    let failure: Error | undefined;
    busboy.on('file', (name, stream, info) => {
      if (name !== options.field || failure) return void stream.resume();
      try {
        if (!GENERIC_TYPES.has(baseType(info.mimeType))) options.checkContentType(info.mimeType);
      } catch (error) {
        failure = error as Error;
        return void stream.resume();
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => (failure = tooLarge()));
      stream.on('end', () => {
        if (!failure) file = { filename: info.filename ?? '', contentType: info.mimeType, data: Buffer.concat(chunks) };
      });
    });
    busboy.on('error', (error: Error) => reject(new BadRequestError(`malformed multipart request: ${error.message}`)));
    busboy.on('close', () => {
      if (failure) reject(failure);
      else if (file) resolve(file);
      else reject(new BadRequestError(`no file in the form field "${options.field}"`));
    });
    req.pipe(busboy);
  });
}
