import type { MessagePort } from 'node:worker_threads';
import type { DocumentInput, DocumentParser, ParsedDocument } from '@agent-host/sdk';
import { localParsers } from './local-parsers.js';
import { overLimit, type ParseLimits } from './parse-limits.js';

export interface ParseTask {
  /** The content type the parser is registered under. */
  contentType: string;
  input: DocumentInput;
  limits: ParseLimits;
  /** Told when the parse starts, so its deadline leaves out the wait for a worker and the worker's start-up. */
  started: MessagePort;
}

/** A failure crosses back as data: error classes do not survive the copy between threads. */
export type ParseOutcome = { document: ParsedDocument } | { failure: { message: string; refused: boolean } };

let parsers: Map<string, DocumentParser> | undefined;

/** One local parse, in a worker thread of `ParserPool`. */
export default async function parseInWorker({ contentType, input, limits, started }: ParseTask): Promise<ParseOutcome> {
  started.postMessage(null);
  started.close();
  parsers ??= localParsers(limits);
  try {
    const document = await parsers.get(contentType)!.parse(input);
    if (document.text.length > limits.maxTextChars) {
      throw overLimit(input.filename, `it has ${document.text.length} characters of text (limit ${limits.maxTextChars})`, 'max_text_chars');
    }
    return { document };
  } catch (error) {
    const refused = (error as { status?: unknown }).status === 400;
    const message = error instanceof Error ? error.message : String(error);
    return { failure: { refused, message: refused ? message : `${input.filename}: the parser failed (${message})` } };
  }
}
