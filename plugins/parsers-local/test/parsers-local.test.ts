// The parsers-local plugin without an Unstructured API: one local parser per
// content type, each returning elements that keep the document's structure.
// PDF and DOCX inputs are generated here (pdfkit, docx) rather than committed.
import { BadRequestError, extensionPoints, PluginRefusedError, type DocumentParser, type ParsedDocument } from '@agent-host/sdk';
import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx';
import PDFDocument from 'pdfkit';
import t from 'tap';
import { contributesOf, loadFirstPartyPlugin } from '../../../test/helpers/first-party-plugin.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const kernel = await loadFirstPartyPlugin('parsers-local');
const parsers = kernel.registry(extensionPoints.documentParsers);

function parserFor(contentType: string): DocumentParser {
  const parser = parsers.get(contentType);
  if (!parser) throw new Error(`no parser registered for ${contentType}`);
  return parser;
}

const parse = (contentType: string, data: Uint8Array | string, filename = 'doc') =>
  parserFor(contentType.split(';')[0]!).parse({ data: typeof data === 'string' ? new TextEncoder().encode(data) : data, filename, contentType });

/** The elements as `[type, text]` pairs, for compact assertions. */
const shape = (doc: ParsedDocument) => doc.elements.map((e) => [e.type, e.text]);
const find = (doc: ParsedDocument, text: string) => doc.elements.find((e) => e.text === text);

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

async function pdfBytes(draw: (doc: InstanceType<typeof PDFDocument>) => void, info: Record<string, string> = {}): Promise<Uint8Array> {
  const doc = new PDFDocument({ info });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => doc.on('end', resolve));
  draw(doc);
  doc.end();
  await ended;
  return new Uint8Array(Buffer.concat(chunks));
}

t.test('the plugin registers a parser under every content type its manifest contributes, and only those', async (t) => {
  const [info] = kernel.plugins();
  t.same(
    info?.registered.documentParsers,
    (await contributesOf('parsers-local')).documentParsers,
    'registered content types equal the manifest’s documentParsers',
  );
});

t.test('an unstructured_api_url that is not a URL refuses start-up naming the key', async (t) => {
  const error = await rejection(loadFirstPartyPlugin('parsers-local', { unstructured_api_url: 'not a url' }));
  t.type(error, PluginRefusedError, 'start-up is refused');
  t.match((error as Error).message, /parsers-local.*invalid_config.*unstructured_api_url/, 'the refusal names the plugin and the key');
});

t.test('PDF: text per page with page numbers; larger type becomes Titles; wrapped lines join into one paragraph', async (t) => {
  const pdf = await pdfBytes(
    (doc) => {
      doc.fontSize(22).text('Shipping');
      doc.fontSize(12).text('Parcels ship within two days of the order. This paragraph is long enough that pdfkit wraps it onto a second line of the page.');
      doc.moveDown();
      doc.text('Weekend orders ship on Monday.');
      doc.addPage();
      doc.fontSize(22).text('Returns');
      doc.fontSize(16).text('Refunds');
      doc.fontSize(12).text('Refunds reach the original card within five days.');
    },
    { Title: 'Customer handbook' },
  );
  const doc = await parse('application/pdf', pdf, 'handbook.pdf');
  t.same(
    shape(doc),
    [
      ['Title', 'Shipping'],
      ['NarrativeText', 'Parcels ship within two days of the order. This paragraph is long enough that pdfkit wraps it onto a second line of the page.'],
      ['NarrativeText', 'Weekend orders ship on Monday.'],
      ['Title', 'Returns'],
      ['Title', 'Refunds'],
      ['NarrativeText', 'Refunds reach the original card within five days.'],
    ],
    'a vertical gap wider than the line spacing separates paragraphs; a wrapped line does not',
  );
  t.same(
    doc.elements.map((e) => e.metadata?.page_number),
    [1, 1, 1, 2, 2, 2],
    'each element carries the page it is on',
  );
  t.same([find(doc, 'Returns')?.metadata?.category_depth, find(doc, 'Refunds')?.metadata?.category_depth], [0, 1], 'the largest heading size is depth 0');
  t.same(
    find(doc, 'Refunds reach the original card within five days.')?.metadata?.headings,
    ['Returns', 'Refunds'],
    'body text knows the headings it sits under',
  );
  t.match(doc.metadata, { parser: 'local-pdf', page_count: 2, title: 'Customer handbook' }, 'document metadata has the page count and the PDF’s title');
  t.ok(doc.text.startsWith('Shipping\n\nParcels ship'), 'the document text is the elements joined by blank lines');
});

t.test('PDF: text set side by side on one baseline stays one line, with a space between the runs', async (t) => {
  const pdf = await pdfBytes((doc) => {
    doc.fontSize(12).text('Item', 72, 100);
    doc.text('Price', 300, 100);
  });
  t.same(shape(await parse('application/pdf', pdf)), [['NarrativeText', 'Item Price']], 'two runs on one baseline make one line with a space');
});

t.test('PDF: bytes that are not a PDF are refused with a 400 naming the file', async (t) => {
  const error = await rejection(parse('application/pdf', 'hello, not a pdf', 'broken.pdf'));
  t.type(error, BadRequestError, 'unreadable input is the caller’s mistake (400)');
  t.match((error as Error).message, /broken\.pdf: not a readable PDF/, 'the message names the file');
});

t.test('PDF: a page without a text layer yields no elements and a warning that OCR is needed', async (t) => {
  const doc = await parse('application/pdf', await pdfBytes((d) => d.rect(100, 100, 50, 50).fill('#000')));
  t.same(doc.elements, [], 'no text, no elements');
  t.match(doc.metadata.warnings, [/no text layer/], 'the snapshot says why it is empty');
});

t.test('DOCX: Word heading styles become Titles with depth, lists ListItems, tables a Table with a line per row', async (t) => {
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Travel policy', heading: HeadingLevel.HEADING_1 }),
          new Paragraph({ children: [new TextRun('Book trains '), new TextRun({ text: 'before', bold: true }), new TextRun(' flights.')] }),
          new Paragraph({ text: 'Allowances', heading: HeadingLevel.HEADING_2 }),
          new Paragraph({ text: 'Meals are covered.', bullet: { level: 0 } }),
          new Paragraph({ text: 'Taxis need a receipt.', bullet: { level: 0 } }),
          new Table({
            rows: [
              new TableRow({ children: ['Item', 'Limit'].map((text) => new TableCell({ children: [new Paragraph(text)] })) }),
              new TableRow({
                children: ['Hotel', '120 EUR'].map((text) => new TableCell({ children: [new Paragraph({ text, alignment: AlignmentType.RIGHT })] })),
              }),
            ],
          }),
        ],
      },
    ],
  });
  const doc = await parse(DOCX, new Uint8Array(await Packer.toBuffer(document)), 'travel.docx');
  t.same(
    shape(doc),
    [
      ['Title', 'Travel policy'],
      ['NarrativeText', 'Book trains before flights.'],
      ['Title', 'Allowances'],
      ['ListItem', 'Meals are covered.'],
      ['ListItem', 'Taxis need a receipt.'],
      ['Table', 'Item | Limit\nHotel | 120 EUR'],
    ],
    'headings, paragraphs (runs joined), bullets and the table come out in document order',
  );
  t.same(find(doc, 'Allowances')?.metadata?.category_depth, 1, 'Heading 2 is depth 1');
  t.same(find(doc, 'Meals are covered.')?.metadata?.headings, ['Travel policy', 'Allowances'], 'list items know their section');
  t.equal(doc.metadata.parser, 'local-docx');
});

t.test('DOCX: bytes that are not a DOCX are refused with a 400 naming the file', async (t) => {
  const error = await rejection(parse(DOCX, 'plain text', 'fake.docx'));
  t.type(error, BadRequestError, 'unreadable input is the caller’s mistake (400)');
  t.match((error as Error).message, /fake\.docx: not a readable DOCX/, 'the message names the file');
});

t.test('HTML: headings, paragraphs, nested lists, tables and pre blocks in order; scripts, styles and the head are dropped', async (t) => {
  const doc = await parse(
    'text/html',
    `<!doctype html><html><head><title>Help &amp; support</title><style>p { color: red }</style></head><body>
      <h1>Support</h1><p>Write to <a href="mailto:x">us</a> any time.<br>We answer within a day.</p>
      <script>track()</script>
      <ul><li>Email<ul><li>Priority email</li></ul></li><li>Phone</li></ul>
      <h3>Hours</h3><table><tr><th>Day</th><th>Open</th></tr><tr><td>Mon</td><td>9-17</td></tr></table>
      <pre>
curl -s help</pre>
      Closing words &amp; thanks.</body></html>`,
  );
  t.same(
    shape(doc),
    [
      ['Title', 'Support'],
      ['NarrativeText', 'Write to us any time. We answer within a day.'],
      ['ListItem', 'Email'],
      ['ListItem', 'Priority email'],
      ['ListItem', 'Phone'],
      ['Title', 'Hours'],
      ['Table', 'Day | Open\nMon | 9-17'],
      ['CodeSnippet', 'curl -s help'],
      ['NarrativeText', 'Closing words & thanks.'],
    ],
    'block structure in document order, entities decoded, line breaks as spaces',
  );
  t.same(find(doc, 'Hours')?.metadata?.category_depth, 2, 'h3 is depth 2');
  t.same(find(doc, 'Mon | 9-17'), undefined, 'table cells are not repeated as paragraphs');
  t.equal(doc.metadata.title, 'Help & support', 'the <title> is document metadata, not an element');
});

t.test('Markdown: headings nest, inline markup is stripped, front matter is skipped', async (t) => {
  const source = `---\ntitle: FAQ\n---\n# FAQ\n\nParcels **ship** within [two days](https://example.com).\n\nSetext section\n--------------\n\n- Tracking\n  - By email\n- Returns\n\n| Plan | Price |\n|------|-------|\n| Pro | 10 |\n\n\`\`\`sh\nnpm start\n\`\`\`\n\n> Quoted *advice*.\n\n# Other\n\nLast.`;
  const doc = await parse('text/markdown', source);
  t.same(
    shape(doc),
    [
      ['Title', 'FAQ'],
      ['NarrativeText', 'Parcels ship within two days.'],
      ['Title', 'Setext section'],
      ['ListItem', 'Tracking'],
      ['ListItem', 'By email'],
      ['ListItem', 'Returns'],
      ['Table', 'Plan | Price\nPro | 10'],
      ['CodeSnippet', 'npm start'],
      ['NarrativeText', 'Quoted advice.'],
      ['Title', 'Other'],
      ['NarrativeText', 'Last.'],
    ],
    'block structure in document order, markup and front matter gone',
  );
  t.same(find(doc, 'By email')?.metadata?.headings, ['FAQ', 'Setext section'], 'a setext heading is level 2 under the level-1 heading');
  t.same(find(doc, 'Last.')?.metadata?.headings, ['Other'], 'a new level-1 heading closes the previous section');
  t.same(find(doc, 'npm start')?.metadata?.language, 'sh', 'a fenced block keeps its language');
  t.same(shape(await parse('text/x-markdown', source)), shape(doc), 'text/x-markdown is parsed as Markdown too');
});

t.test('CSV: one TableRow per record pairing values with the header, numbered from 1', async (t) => {
  const doc = await parse('text/csv', 'name,city,note\nAda,London,"likes tea, not coffee"\nGrace,,Navy\n', 'people.csv');
  t.same(
    shape(doc),
    [
      ['TableRow', 'name: Ada; city: London; note: likes tea, not coffee'],
      ['TableRow', 'name: Grace; note: Navy'],
    ],
    'a quoted delimiter stays in its value; an empty value is left out',
  );
  t.same(
    doc.elements.map((e) => e.metadata?.row_number),
    [1, 2],
    'rows are numbered from 1 after the header',
  );
  t.match(doc.metadata, { parser: 'local-csv', columns: ['name', 'city', 'note'], row_count: 2 }, 'document metadata lists the columns and the row count');
});

t.test('CSV: a semicolon-separated file with a byte-order mark is read by its own delimiter', async (t) => {
  const doc = await parse('text/csv', '\uFEFFproduct;price\n"Tea; green";3,50\n');
  t.same(shape(doc), [['TableRow', 'product: Tea; green; price: 3,50']], 'split at semicolons, commas kept in values, no BOM in the first column');
  t.equal(doc.metadata.delimiter, ';', 'the sniffed delimiter is recorded');
});

t.test('CSV: an unterminated quote is refused with a 400 naming the file', async (t) => {
  const error = await rejection(parse('text/csv', 'a,b\n"open,1\n', 'bad.csv'));
  t.type(error, BadRequestError, 'unreadable input is the caller’s mistake (400)');
  t.match((error as Error).message, /bad\.csv: not valid CSV/, 'the message names the file');
});

t.test('text/plain: paragraphs split at blank lines keep their line breaks; the charset parameter is honoured', async (t) => {
  t.same(
    shape(await parse('text/plain', 'Dear customer,\nthanks.\n\n\nRegards  \n')),
    [
      ['NarrativeText', 'Dear customer,\nthanks.'],
      ['NarrativeText', 'Regards'],
    ],
    'paragraphs split at blank lines, trailing spaces trimmed',
  );
  const latin1 = new Uint8Array([0x63, 0x61, 0x66, 0xe9]); // "café" in ISO-8859-1
  t.same(shape(await parse('text/plain; charset=iso-8859-1', latin1)), [['NarrativeText', 'café']], 'bytes are decoded with the declared charset');
  const error = await rejection(parse('text/plain; charset=klingon', 'x', 'odd.txt'));
  t.type(error, BadRequestError, 'an unknown charset is the caller’s mistake, not a crash');
});

t.test('an aborted signal stops a parse before it starts', async (t) => {
  const controller = new AbortController();
  controller.abort(new Error('cancelled by the job'));
  const error = await rejection(
    parserFor('text/plain').parse({ data: new Uint8Array(1), filename: 'x', contentType: 'text/plain' }, { signal: controller.signal }),
  );
  t.match(error, { message: 'cancelled by the job' }, 'the caller’s abort reason is thrown');
});
