// Hostile documents against parsers-local: each fails its document with the limit it broke, in a worker thread, while
// this process's event loop keeps turning (what keeps a host's chat streams flowing during ingestion).
import { BadRequestError, extensionPoints, type DocumentParser } from '@agent-host/sdk';
import t from 'tap';
import { amplifyingCsv, deepHtml, docxBomb } from '../../../../test/fixtures/hostile-documents.js';
import { manyPagePdf } from '../../../../test/fixtures/many-page-pdf.js';
import { loadFirstPartyPlugin } from '../../../../test/helpers/first-party-plugin.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

async function parsersWith(config: Record<string, unknown> = {}) {
  const kernel = await loadFirstPartyPlugin('parsers-local', config);
  t.teardown(() => kernel.stop());
  const registry = kernel.registry(extensionPoints.documentParsers);
  return (contentType: string): DocumentParser => registry.get(contentType)!;
}

const defaults = await parsersWith();

/**
 * The longest pause of this process's event loop that still counts as turning. A parse on this thread would stop it
 * for seconds; the margin is for a loaded CI machine, where these files share two cores with other test processes and
 * a thread can wait most of a second for one.
 */
const KEPT_TURNING_MS = 1_500;

/** Runs `work` while timing the event loop; resolves with its outcome and the longest gap between 10 ms ticks. */
async function whileTicking<T>(work: () => Promise<T>): Promise<{ outcome: T | Error; longestGapMs: number }> {
  let last = performance.now();
  let longestGapMs = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longestGapMs = Math.max(longestGapMs, now - last);
    last = now;
  }, 10);
  try {
    const outcome = await work().catch((error: Error) => error);
    return { outcome, longestGapMs: Math.max(longestGapMs, performance.now() - last) };
  } finally {
    clearInterval(timer);
  }
}

const parseWith = (parserFor: (type: string) => DocumentParser, contentType: string, data: Uint8Array | string, filename: string) =>
  parserFor(contentType).parse({ data: typeof data === 'string' ? new TextEncoder().encode(data) : data, filename, contentType });

t.test('a DOCX bomb (30 MB of text packed into 37 KB) fails with its ratio before anything loads it whole', async (t) => {
  const bomb = await docxBomb();
  t.ok(bomb.byteLength < 100_000, `the file is small (${bomb.byteLength} bytes)`);
  const { outcome, longestGapMs } = await whileTicking(() => parseWith(defaults, DOCX, bomb, 'bomb.docx'));
  t.type(outcome, BadRequestError, 'the document fails as bad input');
  t.match(
    (outcome as Error).message,
    /^bomb\.docx: word\/document\.xml inflates \d+ times \(limit 100\); the document was not indexed \(limit: \[plugins\.parsers-local\] zip_max_ratio\)$/,
  );
  t.ok(longestGapMs < KEPT_TURNING_MS, `the event loop kept turning (longest gap ${Math.round(longestGapMs)} ms)`);
});

t.test('an amplifying CSV (300 KB, every row repeating 100 names of 1,000 characters) fails over max_text_chars', async (t) => {
  const { outcome, longestGapMs } = await whileTicking(() => parseWith(defaults, 'text/csv', amplifyingCsv(), 'wide.csv'));
  t.type(outcome, BadRequestError);
  t.match((outcome as Error).message, /^wide\.csv: its rows expand to more than 20000000 characters of text; .*max_text_chars\)$/);
  t.ok(longestGapMs < KEPT_TURNING_MS, `the event loop kept turning (longest gap ${Math.round(longestGapMs)} ms)`);
  const narrow = await parseWith(defaults, 'text/csv', `${'h'.repeat(300)},b\n1,2\n`, 'long-name.csv');
  t.equal(narrow.elements[0]?.text, `${'h'.repeat(200)}…: 1; b: 2`, 'column names past csv_max_header_chars are cut in each row');
  const tooWide = await parseWith(defaults, 'text/csv', `${Array.from({ length: 1001 }, (_, i) => `c${i}`).join(',')}\n`, 'columns.csv').catch((e: Error) => e);
  t.match((tooWide as Error).message, /columns\.csv: a row has 1001 columns \(limit 1000\).*csv_max_columns/);
});

t.test('HTML nested 100,000 deep fails over html_max_depth instead of overflowing the stack', async (t) => {
  const { outcome, longestGapMs } = await whileTicking(() => parseWith(defaults, 'text/html', deepHtml(), 'deep.html'));
  t.type(outcome, BadRequestError);
  t.match((outcome as Error).message, /^deep\.html: its elements nest \d+ deep \(limit 500\);.*html_max_depth\)$/);
  t.ok(longestGapMs < KEPT_TURNING_MS, `the event loop kept turning (longest gap ${Math.round(longestGapMs)} ms)`);
  const nested = await parseWith(defaults, 'text/html', '<div>'.repeat(400) + '<p>kept</p>', 'nested.html');
  t.same(
    nested.elements.map((e) => e.text),
    ['kept'],
    'nesting within the limit parses',
  );
});

t.test('a 100,000-page PDF fails over pdf_max_pages; past parse_timeout_seconds a parse fails its document and the pool goes on', async (t) => {
  const pdf = manyPagePdf(100_000);
  const { outcome, longestGapMs } = await whileTicking(() => parseWith(defaults, 'application/pdf', pdf, 'pages.pdf'));
  t.type(outcome, BadRequestError);
  t.match((outcome as Error).message, /^pages\.pdf: it has 100000 pages \(limit 5000\);.*pdf_max_pages\)$/);
  t.ok(longestGapMs < KEPT_TURNING_MS, `the event loop kept turning (longest gap ${Math.round(longestGapMs)} ms)`);

  const patient = await parsersWith({ pdf_max_pages: 200_000, parse_timeout_seconds: 1 });
  const started = Date.now();
  const slow = await whileTicking(() => parseWith(patient, 'application/pdf', pdf, 'pages.pdf'));
  t.type(slow.outcome, BadRequestError);
  t.match((slow.outcome as Error).message, /^pages\.pdf: parsing did not finish within 1 s;.*parse_timeout_seconds\)$/);
  // The whole parse takes well over 30 s; the margin past the 1 s deadline is for a fresh worker on a loaded CI machine.
  t.ok(Date.now() - started < 15_000, 'the parse is stopped at its deadline');
  t.ok(slow.longestGapMs < KEPT_TURNING_MS, `the event loop kept turning (longest gap ${Math.round(slow.longestGapMs)} ms)`);
  const next = await parseWith(patient, 'text/plain', 'still here', 'next.txt');
  t.equal(next.text, 'still here', 'the next document parses in a fresh worker');
});

t.test('a parse that needs more than parse_memory_mb fails its document, not the process', async (t) => {
  const small = await parsersWith({ parse_memory_mb: 64, max_text_chars: 500_000_000 });
  const html = '<p>x</p>'.repeat(3_000_000);
  const { outcome, longestGapMs } = await whileTicking(() => parseWith(small, 'text/html', html, 'huge.html'));
  t.type(outcome, BadRequestError);
  t.match((outcome as Error).message, /^huge\.html: parsing needed more than 64 MB of memory;.*parse_memory_mb\)$/);
  t.ok(longestGapMs < KEPT_TURNING_MS, `the event loop kept turning (longest gap ${Math.round(longestGapMs)} ms)`);
  const next = await parseWith(small, 'text/plain', 'after', 'after.txt');
  t.equal(next.text, 'after', 'the pool replaced the worker');
});
