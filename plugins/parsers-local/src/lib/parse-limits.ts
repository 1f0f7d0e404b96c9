import { BadRequestError } from '@agent-host/sdk';
import type { ZipLimits } from './zip-limits.js';

/** What one local parse may take and produce; past a limit the document fails with the limit named. */
export interface ParseLimits {
  /** Characters of text a parse may produce. */
  maxTextChars: number;
  zip: ZipLimits;
  csvMaxColumns: number;
  /** Column names are cut to this length in every row's text (each row repeats them). */
  csvMaxHeaderChars: number;
  pdfMaxPages: number;
  /** Element nesting an HTML (or DOCX, through its HTML) document may have. */
  htmlMaxDepth: number;
}

/** The error a parse over a limit fails with: its message is the document's reason. */
export function overLimit(filename: string, what: string, key: string): BadRequestError {
  return new BadRequestError(`${filename}: ${what}; the document was not indexed (limit: [plugins.parsers-local] ${key})`, { code: 'DOCUMENT_UNREADABLE' });
}
