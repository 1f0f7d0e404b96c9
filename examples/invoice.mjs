#!/usr/bin/env node
// A generated invoice PDF, for trying document recognition (README "Document recognition") and for its benchmark:
//   node examples/invoice.mjs [--pages N] [--number INV-2026-0042] > invoice.pdf
// The first page holds the labelled fields, one per paragraph (the offline model copies `Label: value` lines); further pages hold
// line items, as a long invoice would.
import PDFDocument from 'pdfkit';

/**
 * @param {{ pages?: number, number?: string, total?: string, dueDate?: string, vendor?: string }} [options]
 * @returns {Promise<Buffer>}
 */
export function invoicePdf({ pages = 1, number = 'INV-2026-0042', total = '1,250.00', dueDate = '2026-12-31', vendor = 'Acme Supplies Ltd' } = {}) {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ size: 'A4', margin: 56, info: { Title: `Invoice ${number}` } });
    const chunks = [];
    doc.on('data', (chunk) => chunks.push(chunk));
    doc.on('end', () => resolve(Buffer.concat(chunks)));
    doc.on('error', reject);
    doc.fontSize(22).text('INVOICE').moveDown();
    doc.fontSize(11);
    // A blank line between fields keeps each its own paragraph in the text layer.
    for (const line of [`Invoice number: ${number}`, `Vendor: ${vendor}`, `Due date: ${dueDate}`, `Total: ${total} EUR`]) doc.text(line).moveDown();
    doc.moveDown().text('Payment within 30 days by bank transfer. Thank you for your business.');
    for (let page = 2; page <= pages; page++) {
      doc.addPage().fontSize(14).text(`Line items, page ${page}`).moveDown().fontSize(10);
      for (let item = 1; item <= 30; item++) doc.text(`${page * 100 + item}  Widget type ${item}  2 x 12.50  25.00 EUR`);
    }
    doc.end();
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const flag = (name, fallback) => {
    const at = process.argv.indexOf(name);
    return at > 0 ? process.argv[at + 1] : fallback;
  };
  process.stdout.write(await invoicePdf({ pages: Number(flag('--pages', 1)), number: flag('--number', 'INV-2026-0042') }));
}
