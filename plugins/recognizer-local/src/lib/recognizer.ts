import type {
  DocumentInput,
  DocumentRecognizer,
  FieldLocation,
  FieldValue,
  ParsedDocument,
  ParsedElement,
  PreparedDocument,
  RecognitionContext,
  RecognitionPage,
} from '@agent-host/sdk';
import { locateValues } from './locate.js';
import type { RenderPool } from './render-pool.js';

const PDF = 'application/pdf';
const IMAGES = ['image/png', 'image/jpeg', 'image/webp'];
// Formats without pages of their own: read by the host's parsers, set on pages for the rendition.
const FLOWING = ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'text/plain', 'text/markdown', 'text/html'];

const baseType = (contentType: string) => contentType.split(';', 1)[0]!.trim().toLowerCase();

/** Per-page text from the parsed elements (`metadata.page_number`, 1 when a parser gives none), for every page. */
function pagesOf(elements: ParsedElement[], pageCount: number): RecognitionPage[] {
  const texts: string[][] = Array.from({ length: Math.max(pageCount, 1) }, () => []);
  for (const element of elements) {
    const number = typeof element.metadata?.page_number === 'number' ? element.metadata.page_number : 1;
    texts[Math.min(Math.max(number, 1), texts.length) - 1]!.push(element.text);
  }
  return texts.map((lines, i) => ({ page_number: i + 1, text: lines.join('\n') }));
}

const textOf = (pages: RecognitionPage[]) => pages.map((page) => `[page ${page.page_number}]\n${page.text}`).join('\n\n');

/**
 * `local_layout`: text and layout come from the host's parsers (so the Unstructured API, when configured, reads
 * scans and images); the rendition and previews are made in the render pool. A PDF is its own rendition; an image
 * goes on a page of its size; DOCX, HTML, Markdown and text are set on A4 pages from their parsed text.
 */
export class LocalLayoutRecognizer implements DocumentRecognizer {
  readonly contentTypes = [PDF, ...IMAGES, ...FLOWING];

  constructor(private readonly pool: RenderPool) {}

  async prepare(input: DocumentInput, context: RecognitionContext): Promise<PreparedDocument> {
    context.signal.throwIfAborted();
    const type = baseType(input.contentType);
    const spec = { previews: context.limits.preview_pages, width: context.limits.preview_width_px, maxPages: context.limits.max_pages };
    const render = (task: Parameters<RenderPool['render']>[0]) => this.pool.render(task, input.filename, context.signal);
    if (type === PDF) {
      const [parsed, rendered] = await Promise.all([context.parse(input), render({ kind: 'pdf', data: input.data, ...spec })]);
      const pages = pagesOf(parsed.elements, rendered.page_count);
      return {
        text: textOf(pages),
        pages,
        elements: parsed.elements,
        page_count: rendered.page_count,
        pdf: { data: input.data, rendition: 'original' },
        previews: rendered.previews,
        warnings: warningsOf(parsed),
      };
    }
    if (IMAGES.includes(type)) {
      const warnings: string[] = [];
      const [parsed, rendered] = await Promise.all([
        context.parse(input).catch((error: Error) => {
          warnings.push(`no text was read from the image (${error.message}); reading images needs OCR, which the Unstructured API provides`);
          return undefined;
        }),
        render({ kind: 'image', data: input.data, ...spec }),
      ]);
      const elements = parsed?.elements ?? [];
      const pages = pagesOf(elements, 1);
      return {
        text: textOf(pages),
        pages,
        elements,
        page_count: 1,
        pdf: rendered.pdf && { data: rendered.pdf, rendition: 'image' },
        previews: rendered.previews,
        warnings: [...warnings, ...(parsed ? warningsOf(parsed) : [])],
      };
    }
    if (!FLOWING.includes(type)) throw new Error(`local_layout does not prepare ${type}; it prepares ${this.contentTypes.join(', ')}`);
    const parsed = await context.parse(input);
    const rendered = await render({ kind: 'text', blocks: parsed.elements.map(({ type: kind, text }) => ({ type: kind, text })), ...spec });
    const pages = (rendered.page_texts ?? []).map((text, i) => ({ page_number: i + 1, text }));
    return {
      text: textOf(pages),
      pages,
      elements: parsed.elements,
      page_count: rendered.page_count,
      pdf: rendered.pdf && { data: rendered.pdf, rendition: 'text_layout' },
      previews: rendered.previews,
      warnings: [...warningsOf(parsed), `the PDF sets the text of the ${type} document on pages; its own layout (fonts, tables, images) is not kept`],
    };
  }

  locate(values: FieldValue[], document: PreparedDocument): FieldLocation[] {
    return locateValues(values, document.pages);
  }
}

function warningsOf(parsed: ParsedDocument): string[] {
  const warnings = parsed.metadata.warnings;
  return Array.isArray(warnings) ? warnings.filter((w): w is string => typeof w === 'string') : [];
}
