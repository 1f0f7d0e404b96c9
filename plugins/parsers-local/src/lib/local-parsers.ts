import type { DocumentParser } from '@agent-host/sdk';
import { CsvParser } from './csv-parser.js';
import { DocxParser } from './docx-parser.js';
import { HtmlParser } from './html-parser.js';
import { MarkdownParser } from './markdown-parser.js';
import type { LOCAL_CONTENT_TYPES } from './local-content-types.js';
import type { ParseLimits } from './parse-limits.js';
import { PdfParser } from './pdf-parser.js';
import { TextParser } from './text-parser.js';

const LOCAL: Record<(typeof LOCAL_CONTENT_TYPES)[number], (limits: ParseLimits) => DocumentParser> = {
  'application/pdf': (limits) => new PdfParser(limits),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': (limits) => new DocxParser(limits),
  'text/html': (limits) => new HtmlParser(limits),
  'text/markdown': (limits) => new MarkdownParser(limits),
  'text/x-markdown': (limits) => new MarkdownParser(limits),
  'text/csv': (limits) => new CsvParser(limits),
  'text/plain': () => new TextParser(),
};

/** Each local content type with its parser, under `limits`. */
export function localParsers(limits: ParseLimits): Map<string, DocumentParser> {
  return new Map(Object.entries(LOCAL).map(([contentType, create]) => [contentType, create(limits)]));
}
