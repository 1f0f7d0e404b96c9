import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { BadRequestError, type DocumentInput, type DocumentParser, type ParsedDocument, type ParsedElement } from '@agent-host/sdk';
import type * as PdfJs from 'pdfjs-dist/legacy/build/pdf.mjs';
import { parsedDocument } from './elements.js';
import { overLimit, type ParseLimits } from './parse-limits.js';

// pdfjs reads these from disk in Node: CMaps decode CJK text, standard font
// data covers PDFs that use the 14 base fonts without embedding them.
const pdfjsDir = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const CMAP_URL = path.join(pdfjsDir, 'cmaps') + path.sep;
const STANDARD_FONT_DATA_URL = path.join(pdfjsDir, 'standard_fonts') + path.sep;

let pdfjs: Promise<typeof PdfJs> | undefined;

/**
 * pdf.js's legacy build (the one for Node), loaded on first use. Its core-js polyfills replace `Array.prototype.push`
 * and `JSON.parse` on Node 20 for edge cases nothing here meets (pushing past 2^53 - 1 elements, a reviver reading
 * its source text), which made every `push` in the thread a JavaScript function, and `Function.prototype.toString`
 * to show those as native: the natives are put back once both halves are loaded. pdf.js runs its worker half in this
 * thread in Node, so it is loaded here too, not on the first document, where it would bring the polyfills back.
 */
function loadPdfJs(): Promise<typeof PdfJs> {
  return (pdfjs ??= (async () => {
    const { push } = Array.prototype;
    const { parse } = JSON;
    const { toString } = Function.prototype;
    const loaded = await import('pdfjs-dist/legacy/build/pdf.mjs');
    await import(pathToFileURL(path.join(pdfjsDir, 'legacy', 'build', 'pdf.worker.mjs')).href);
    Array.prototype.push = push;
    JSON.parse = parse;
    Function.prototype.toString = toString;
    return loaded;
  })());
}

/** How much larger than the body text a line must be to count as a heading. */
const TITLE_SCALE = 1.2;
/** A vertical gap wider than this many line heights starts a new paragraph. */
const PARAGRAPH_GAP = 1.5;

interface Line {
  text: string;
  page: number;
  y: number;
  size: number;
  xEnd: number;
}

interface TextPiece {
  str: string;
  transform: number[];
  width: number;
  hasEOL: boolean;
}

/** Joins a page's text items into visual lines (same baseline, until an end-of-line mark). */
function pageLines(items: TextPiece[], page: number): Line[] {
  const lines: Line[] = [];
  let current: Line | undefined;
  for (const item of items) {
    const [, , c = 0, d = 0, x = 0, y = 0] = item.transform;
    const size = Math.hypot(c, d);
    const sameLine = current !== undefined && Math.abs(current.y - y) <= Math.max(current.size, size) / 2;
    if (item.str.trim() === '') {
      // A space pdfjs emits as an item of its own.
      if (current && sameLine && item.str) {
        current.text += ' ';
        current.xEnd = x + item.width;
      }
    } else if (current && sameLine) {
      // Distant runs on one baseline (table cells) have no space item between them.
      const gap = x - current.xEnd > size / 4 && !/\s$/.test(current.text) && !/^\s/.test(item.str);
      current.text += (gap ? ' ' : '') + item.str;
      current.size = Math.max(current.size, size);
      current.xEnd = x + item.width;
    } else {
      current = { text: item.str, page, y, size, xEnd: x + item.width };
      lines.push(current);
    }
    if (item.hasEOL) current = undefined;
  }
  return lines.map((line) => ({ ...line, text: line.text.replace(/\s+/g, ' ').trim() })).filter((line) => line.text !== '');
}

/** The font size most of the text is set in (by characters). */
function bodySize(lines: Line[]): number {
  const chars = new Map<number, number>();
  for (const line of lines) chars.set(Math.round(line.size), (chars.get(Math.round(line.size)) ?? 0) + line.text.length);
  return [...chars].reduce((best, entry) => (entry[1] > best[1] ? entry : best), [0, -1])[0];
}

/**
 * Groups lines into elements: lines set clearly larger than the body text are
 * Titles (the largest size is depth 0), the rest NarrativeText paragraphs,
 * split where the vertical gap exceeds {@link PARAGRAPH_GAP} line heights or
 * the page changes.
 */
function linesToElements(lines: Line[]): ParsedElement[] {
  const body = bodySize(lines);
  const isTitle = (line: Line) => line.size >= body * TITLE_SCALE && line.text.length <= 200;
  const titleSizes = [...new Set(lines.filter(isTitle).map((l) => Math.round(l.size)))].sort((a, b) => b - a);
  const elements: ParsedElement[] = [];
  let previous: Line | undefined;
  for (const line of lines) {
    const type = isTitle(line) ? 'Title' : 'NarrativeText';
    const last = elements.at(-1);
    const continues =
      previous !== undefined &&
      last?.type === type &&
      previous.page === line.page &&
      Math.round(previous.size) === Math.round(line.size) &&
      previous.y - line.y >= 0 &&
      previous.y - line.y <= PARAGRAPH_GAP * Math.max(previous.size, line.size);
    if (continues) {
      last.text += ' ' + line.text;
    } else {
      const metadata: Record<string, unknown> = { page_number: line.page };
      if (type === 'Title') metadata.category_depth = titleSizes.indexOf(Math.round(line.size));
      elements.push({ type, text: line.text, metadata });
    }
    previous = line;
  }
  return elements;
}

async function openPdf(input: DocumentInput): Promise<PdfJs.PDFDocumentProxy> {
  const { getDocument } = await loadPdfJs();
  try {
    return await getDocument({
      data: new Uint8Array(input.data), // pdfjs may detach the buffer it is given
      cMapUrl: CMAP_URL,
      cMapPacked: true,
      standardFontDataUrl: STANDARD_FONT_DATA_URL,
      isEvalSupported: false,
      disableFontFace: true,
      verbosity: 0,
    }).promise;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'PasswordException') throw new BadRequestError(`${input.filename}: the PDF is password-protected`, { code: 'DOCUMENT_UNREADABLE' });
    throw new BadRequestError(`${input.filename}: not a readable PDF (${(error as Error).message})`, { code: 'DOCUMENT_UNREADABLE' });
  }
}

/** `application/pdf` through pdfjs: text per page, headings found by font size; no OCR. */
export class PdfParser implements DocumentParser {
  constructor(private readonly limits: ParseLimits) {}

  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const pdf = await openPdf(input);
    try {
      if (pdf.numPages > this.limits.pdfMaxPages)
        throw overLimit(input.filename, `it has ${pdf.numPages} pages (limit ${this.limits.pdfMaxPages})`, 'pdf_max_pages');
      const lines: Line[] = [];
      for (let number = 1; number <= pdf.numPages; number++) {
        options?.signal?.throwIfAborted();
        const page = await pdf.getPage(number);
        const content = await page.getTextContent();
        lines.push(
          ...pageLines(
            content.items.flatMap((item) => ('str' in item ? [item] : [])),
            number,
          ),
        );
        page.cleanup();
      }
      const info = (await pdf.getMetadata().catch(() => undefined))?.info as { Title?: unknown } | undefined;
      const title = typeof info?.Title === 'string' ? info.Title.trim() : '';
      const metadata: Record<string, unknown> = { parser: 'local-pdf', filename: input.filename, page_count: pdf.numPages };
      if (title) metadata.title = title;
      if (lines.length === 0) metadata.warnings = ['no text layer found (a scanned PDF needs OCR, which the Unstructured API provides)'];
      return parsedDocument(linesToElements(lines), metadata);
    } finally {
      await pdf.destroy();
    }
  }
}
