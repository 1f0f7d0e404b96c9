import { pipeline } from 'node:stream/promises';
import { attachmentDisposition, type Logger } from '@agent-host/sdk';
import type { Response } from 'restify';

/** A stored file to send: its bytes, size, original name and type. */
export interface StoredFile {
  body: AsyncIterable<Uint8Array | string>;
  /** Unknown for a file generated while it streams. */
  size?: number;
  filename: string;
  contentType: string;
}

/**
 * Sends a stored upload as an attachment under its original name: the browser neither sniffs nor runs it. A client
 * that goes away mid-file is only logged.
 */
export async function sendAttachment(res: Response, file: StoredFile, log: Logger, context: Record<string, unknown>): Promise<undefined> {
  res.writeHead(200, {
    'content-type': file.contentType,
    ...(file.size !== undefined && { 'content-length': String(file.size) }),
    'content-disposition': attachmentDisposition(file.filename),
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'cache-control': 'private, no-cache',
  });
  try {
    await pipeline(file.body, res);
  } catch (error) {
    log.warn({ err: error, ...context }, 'a download ended early');
  }
  return undefined;
}
