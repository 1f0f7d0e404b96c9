// pdf.js's legacy build brings core-js polyfills that replace builtins on Node 20 (`Array.prototype.push` became a
// JavaScript function for every push in the thread, about a fifth of a PDF parse's time). The PDF parser loads
// pdf.js, both halves, and puts the natives back; this file imports the parser and parses a PDF in its own process,
// and checks no builtin it had before either was replaced. A pdf.js upgrade that replaces another one fails here, to
// be looked at.
import PDFDocument from 'pdfkit';
import t from 'tap';
import type { ParseLimits } from '../src/lib/parse-limits.js';

const BUILTINS: Record<string, object> = {
  Array,
  'Array.prototype': Array.prototype,
  Object,
  'Object.prototype': Object.prototype,
  'Function.prototype': Function.prototype,
  JSON,
  Math,
  Number,
  'String.prototype': String.prototype,
  'Map.prototype': Map.prototype,
  'Set.prototype': Set.prototype,
  Promise,
  'Promise.prototype': Promise.prototype,
  'Uint8Array.prototype': Uint8Array.prototype,
  'TypedArray.prototype': Object.getPrototypeOf(Uint8Array.prototype) as object,
  'ArrayBuffer.prototype': ArrayBuffer.prototype,
  Reflect,
};

/** Every own property of each builtin above, by name, as its value or getter. */
function snapshot(): Map<string, unknown> {
  const properties = new Map<string, unknown>();
  for (const [name, target] of Object.entries(BUILTINS)) {
    for (const key of Reflect.ownKeys(target)) {
      const descriptor = Object.getOwnPropertyDescriptor(target, key)!;
      properties.set(`${name}.${String(key)}`, 'value' in descriptor ? descriptor.value : descriptor.get);
    }
  }
  return properties;
}

function pdfBytes(): Promise<Uint8Array> {
  const doc = new PDFDocument();
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => doc.on('end', resolve));
  doc.fontSize(12).text('Parcels ship within two days of the order.');
  doc.end();
  return ended.then(() => new Uint8Array(Buffer.concat(chunks)));
}

const limits = { pdfMaxPages: 10 } as ParseLimits;

t.test('parsing a PDF leaves the builtins the thread had as they were', async (t) => {
  const pdf = await pdfBytes();
  const before = snapshot();
  const { PdfParser } = await import('../src/lib/pdf-parser.js');
  const doc = await new PdfParser(limits).parse({ data: pdf, filename: 'a.pdf', contentType: 'application/pdf' });
  t.equal(doc.text, 'Parcels ship within two days of the order.', 'the PDF was parsed');
  const after = snapshot();
  const replaced = [...before].filter(([key, value]) => !Object.is(after.get(key), value)).map(([key]) => key);
  t.same(replaced, [], 'no builtin was replaced');
  t.type(Promise.withResolvers, 'function', 'what pdf.js adds for itself stays');
});
