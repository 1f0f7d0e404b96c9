import { createRequire } from 'node:module';
import path from 'node:path';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import PDFDocument from 'pdfkit';
import { getDocument, type PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

// Runs in a worker thread of the render pool: pdfjs and the canvas work on untrusted files here, under a heap
// ceiling and a deadline, never on the host's event loop.

const pdfjsDir = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const STANDARD_FONT_DATA_URL = path.join(pdfjsDir, 'standard_fonts') + path.sep;
const CMAP_URL = path.join(pdfjsDir, 'cmaps') + path.sep;
// A preview is drawn at most this many times the page's size in points (a postage-stamp page is not blown up).
const MAX_SCALE = 3;

export interface PreviewSpec {
  previews: number;
  width: number;
  maxPages: number;
}

export type RenderTask =
  | ({ kind: 'pdf'; data: Uint8Array } & PreviewSpec)
  | ({ kind: 'image'; data: Uint8Array } & PreviewSpec)
  | ({ kind: 'text'; blocks: { type: string; text: string }[] } & PreviewSpec);

export interface RenderedPreview {
  page_number: number;
  width: number;
  height: number;
  png: Uint8Array;
}

export type RenderOutcome = { pdf: Uint8Array | null; page_count: number; page_texts: string[] | null; previews: RenderedPreview[] } | { refused: string };

class Refusal extends Error {}

export default async function render(task: RenderTask): Promise<RenderOutcome> {
  try {
    if (task.kind === 'pdf') return { pdf: null, ...(await renderPdf(task.data, task, false)) };
    if (task.kind === 'image') return await renderImage(task.data, task);
    const pdf = await textLayoutPdf(task.blocks);
    return { pdf, ...(await renderPdf(pdf, task, true)) };
  } catch (error) {
    if (error instanceof Refusal) return { refused: error.message };
    throw error;
  }
}

async function openPdf(data: Uint8Array): Promise<PDFDocumentProxy> {
  try {
    return await getDocument({
      data: new Uint8Array(data),
      cMapUrl: CMAP_URL,
      cMapPacked: true,
      standardFontDataUrl: STANDARD_FONT_DATA_URL,
      isEvalSupported: false,
      verbosity: 0,
    }).promise;
  } catch (error) {
    const name = (error as Error).name;
    throw new Refusal(name === 'PasswordException' ? 'the PDF is password-protected' : `not a readable PDF (${(error as Error).message})`);
  }
}

/** Previews of the first pages; with `readText`, the text of every page too (a rendition the host made has no parse of its own). */
async function renderPdf(data: Uint8Array, spec: PreviewSpec, readText: boolean) {
  const pdf = await openPdf(data);
  try {
    if (pdf.numPages > spec.maxPages) throw new Refusal(`it has ${pdf.numPages} pages; the limit is ${spec.maxPages}`);
    const previews: RenderedPreview[] = [];
    for (let number = 1; number <= Math.min(spec.previews, pdf.numPages); number++) {
      const page = await pdf.getPage(number);
      const base = page.getViewport({ scale: 1 });
      const viewport = page.getViewport({ scale: Math.min(spec.width / base.width, MAX_SCALE) });
      const canvas = createCanvas(Math.floor(viewport.width), Math.floor(viewport.height));
      // pdf.js takes a DOM canvas; @napi-rs/canvas is the one it uses itself in Node.
      await page.render({ canvasContext: canvas.getContext('2d') as never, viewport, canvas: canvas as never }).promise;
      previews.push({ page_number: number, width: canvas.width, height: canvas.height, png: canvas.toBuffer('image/png') });
      page.cleanup();
    }
    let page_texts: string[] | null = null;
    if (readText) {
      page_texts = [];
      for (let number = 1; number <= pdf.numPages; number++) {
        const content = await (await pdf.getPage(number)).getTextContent();
        page_texts.push(
          content.items
            .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
            .join('')
            .trim(),
        );
      }
    }
    return { page_count: pdf.numPages, page_texts, previews };
  } finally {
    await pdf.destroy();
  }
}

/** An image: a one-page PDF of its size holding it, and its preview scaled to the width asked. */
async function renderImage(data: Uint8Array, spec: PreviewSpec): Promise<RenderOutcome> {
  let image: Awaited<ReturnType<typeof loadImage>>;
  try {
    image = await loadImage(Buffer.from(data));
  } catch (error) {
    throw new Refusal(`not a readable image (${(error as Error).message})`);
  }
  const full = createCanvas(image.width, image.height);
  full.getContext('2d').drawImage(image, 0, 0);
  const png = full.toBuffer('image/png');
  const scale = Math.min(spec.width / image.width, 1);
  const preview = createCanvas(Math.max(1, Math.round(image.width * scale)), Math.max(1, Math.round(image.height * scale)));
  preview.getContext('2d').drawImage(image, 0, 0, preview.width, preview.height);
  const pdf = await pdfOf((doc) => {
    doc.addPage({ size: [image.width, image.height], margin: 0 });
    doc.image(png, 0, 0, { width: image.width, height: image.height });
  });
  return {
    pdf,
    page_count: 1,
    page_texts: null,
    previews: spec.previews > 0 ? [{ page_number: 1, width: preview.width, height: preview.height, png: preview.toBuffer('image/png') }] : [],
  };
}

/** A document without pages (DOCX, HTML, text): its parsed blocks set on A4 pages, titles larger. */
function textLayoutPdf(blocks: { type: string; text: string }[]): Promise<Uint8Array> {
  return pdfOf((doc) => {
    doc.addPage({ size: 'A4', margin: 56 });
    for (const block of blocks) {
      const title = block.type === 'Title';
      doc
        .font(title ? 'Helvetica-Bold' : 'Helvetica')
        .fontSize(title ? 14 : 10)
        .text(block.text, { paragraphGap: title ? 4 : 8 });
    }
  });
}

function pdfOf(write: (doc: PDFKit.PDFDocument) => void): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ autoFirstPage: false, compress: true, info: { Producer: 'agent-host recognizer-local' } });
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    doc.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    doc.on('error', reject);
    write(doc);
    doc.end();
  });
}
