import type { DocumentParser } from '@agent-host/sdk';
import { CsvParser } from './csv-parser.js';
import { DocxParser } from './docx-parser.js';
import { HtmlParser } from './html-parser.js';
import { MarkdownParser } from './markdown-parser.js';
import { PdfParser } from './pdf-parser.js';
import { TextParser } from './text-parser.js';
import { UnstructuredParser, type UnstructuredParserOptions } from './unstructured-parser.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** The content types parsed on this machine, each with its parser. */
function localParsers(): Map<string, DocumentParser> {
  const markdown = new MarkdownParser();
  return new Map<string, DocumentParser>([
    ['application/pdf', new PdfParser()],
    [DOCX, new DocxParser()],
    ['text/html', new HtmlParser()],
    ['text/markdown', markdown],
    ['text/x-markdown', markdown],
    ['text/csv', new CsvParser()],
    ['text/plain', new TextParser()],
  ]);
}

/** What the Unstructured API parses by default when it is configured: the local types and the formats only it reads. */
export const UNSTRUCTURED_CONTENT_TYPES = [
  ...localParsers().keys(),
  'application/msword',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.ms-excel',
  'application/vnd.oasis.opendocument.text',
  'application/rtf',
  'application/epub+zip',
  'message/rfc822',
  'application/vnd.ms-outlook',
  'image/png',
  'image/jpeg',
  'image/tiff',
];

/**
 * The parser registered under each content type. Without an Unstructured URL
 * every local type gets its local parser; with one, the Unstructured parser
 * takes each of `unstructured.contentTypes` (replacing the local parser there,
 * since a content type has one parser) and the local parsers keep the rest.
 */
export function parserRegistrations(unstructured?: UnstructuredParserOptions & { contentTypes: string[] }): [string, DocumentParser][] {
  const local = [...localParsers()];
  if (!unstructured) return local;
  const parser = new UnstructuredParser(unstructured);
  const routed = new Set(unstructured.contentTypes.map((type) => type.toLowerCase()));
  return [...local.filter(([type]) => !routed.has(type)), ...[...routed].map((type): [string, DocumentParser] => [type, parser])];
}
