import type { DocumentInput, DocumentRecognizer, ParsedDocument, PreparedDocument, RecognitionContext } from '../extensions/documents.js';
import { abortedSignal, conformanceRule, rejectionOf, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'document recognizer';
const PNG_MAGIC = [0x89, 0x50, 0x4e, 0x47];

/** A document a recognizer prepares, a phrase its text holds, and the 1-based page the phrase is on. */
export interface RecognizerSample {
  input: DocumentInput;
  contains: string;
  page: number;
}

/** What the suite runs a recognizer on: a PDF of two pages or more, any other type it prepares, and the host's parse. @public */
export interface RecognizerSamples {
  pdf: RecognizerSample;
  /** A document without pages of its own (DOCX, text): it must still get a PDF rendition and previews. */
  other: RecognizerSample;
  parse(input: DocumentInput): Promise<ParsedDocument>;
}

/**
 * What every {@link DocumentRecognizer} must do: prepare a PDF into its text, per-page text and layout, keep the
 * original as the PDF, render PNG previews of the first pages no wider than asked and no more than asked; give a
 * document without pages a PDF rendition and previews too; locate a value on the page it is on (null when it is on
 * none); refuse a document over the page limit and an aborted caller.
 * @public
 */
export function documentRecognizerConformance(recognizer: DocumentRecognizer, samples: RecognizerSamples): ConformanceRule[] {
  const context = (limits: Partial<RecognitionContext['limits']> = {}, signal = new AbortController().signal): RecognitionContext => ({
    parse: samples.parse,
    limits: { preview_pages: 2, preview_width_px: 400, max_pages: 100, ...limits },
    signal,
  });
  const checkPreviews = (fail: Fail, named: string, prepared: PreparedDocument, most: number) => {
    if (prepared.previews.length === 0) fail(`${named}: no preview pages`);
    if (prepared.previews.length > most) fail(`${named}: ${prepared.previews.length} previews, more than the ${most} asked`);
    prepared.previews.forEach((preview, i) => {
      if (preview.page_number !== i + 1) fail(`${named}: preview ${i} is of page ${preview.page_number}, not ${i + 1}`);
      if (!PNG_MAGIC.every((byte, j) => preview.png[j] === byte)) fail(`${named}: preview ${i} is not a PNG`);
      if (preview.width > 400 || preview.width <= 0 || preview.height <= 0)
        fail(`${named}: preview ${i} is ${preview.width}x${preview.height}, asked at most 400 wide`);
    });
  };
  const { pdf, other } = samples;
  return [
    conformanceRule(SUITE, 'prepare() reads a PDF page by page, keeps it as the rendition and renders previews', async (fail: Fail) => {
      const named = pdf.input.filename;
      const prepared = await recognizer.prepare(pdf.input, context());
      if (!prepared.text.includes(pdf.contains)) fail(`${named}: the text does not hold ${JSON.stringify(pdf.contains)}`);
      if (prepared.page_count < 2) fail(`${named}: page_count ${prepared.page_count}; the sample has two pages or more`);
      prepared.pages.forEach((page, i) => page.page_number !== i + 1 && fail(`${named}: pages[${i}] is page ${page.page_number}`));
      if (!prepared.pages[pdf.page - 1]?.text.includes(pdf.contains)) fail(`${named}: page ${pdf.page} does not hold ${JSON.stringify(pdf.contains)}`);
      if (!Array.isArray(prepared.elements) || prepared.elements.length === 0) fail(`${named}: no layout elements`);
      if (prepared.pdf?.rendition !== 'original') fail(`${named}: the rendition is ${prepared.pdf?.rendition ?? 'missing'}, not the original`);
      else if (Buffer.compare(Buffer.from(prepared.pdf.data), Buffer.from(pdf.input.data)) !== 0)
        fail(`${named}: the original rendition differs from the upload`);
      checkPreviews(fail, named, prepared, 2);
    }),
    conformanceRule(SUITE, 'prepare() renders only as many previews as asked', async (fail: Fail) => {
      const prepared = await recognizer.prepare(pdf.input, context({ preview_pages: 1 }));
      if (prepared.previews.length !== 1) fail(`${pdf.input.filename}: ${prepared.previews.length} previews with preview_pages 1`);
    }),
    conformanceRule(SUITE, 'prepare() gives a document without pages a PDF rendition and previews', async (fail: Fail) => {
      const named = `${other.input.contentType} (${other.input.filename})`;
      const prepared = await recognizer.prepare(other.input, context());
      if (!prepared.text.includes(other.contains)) fail(`${named}: the text does not hold ${JSON.stringify(other.contains)}`);
      if (!prepared.pdf || !Buffer.from(prepared.pdf.data.subarray(0, 5)).equals(Buffer.from('%PDF-'))) fail(`${named}: no PDF rendition`);
      if (prepared.pdf?.rendition === 'original') fail(`${named}: a ${other.input.contentType} is not its own PDF`);
      checkPreviews(fail, named, prepared, 2);
    }),
    conformanceRule(SUITE, 'locate() gives the page a value is on, and null for a value on none', async (fail: Fail) => {
      const prepared = await recognizer.prepare(pdf.input, context());
      const [found, missing] = recognizer.locate(
        [
          { field_id: 'present', value: pdf.contains },
          { field_id: 'absent', value: 'zq-value-on-no-page-81' },
        ],
        prepared,
      );
      if (found?.field_id !== 'present' || found.page_number !== pdf.page)
        fail(`locate found ${JSON.stringify(pdf.contains)} on ${JSON.stringify(found)}, not page ${pdf.page}`);
      if (missing?.field_id !== 'absent' || missing.page_number !== null) fail(`locate placed a value the document lacks: ${JSON.stringify(missing)}`);
    }),
    conformanceRule(SUITE, 'prepare() refuses a document over max_pages', async (fail: Fail) => {
      const error = await rejectionOf(recognizer.prepare(pdf.input, context({ max_pages: 1 })));
      if (error === undefined) fail(`${pdf.input.filename}: a document of two pages or more was prepared with max_pages 1`);
    }),
    conformanceRule(SUITE, 'prepare() with an aborted signal rejects', async (fail: Fail) => {
      const error = await rejectionOf(recognizer.prepare(pdf.input, context({}, abortedSignal())));
      if (error === undefined) fail(`${pdf.input.filename}: it resolved for a cancelled run`);
    }),
  ];
}
