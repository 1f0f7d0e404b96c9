// The named chunking strategies over parse snapshots (core/src/knowledge/chunking.ts).
import { ValidationError, type ParsedDocument } from '@agent-host/sdk';
import t from 'tap';
import { chunkDocument, parseChunking } from '../../core/src/knowledge/chunking.js';

const at = { strategy: ['body', 'chunking_strategy'], params: ['body', 'chunking_params'] };
const title = (text: string, depth: number, headings: string[] = []) => ({ type: 'Title', text, metadata: { category_depth: depth, headings } });
const para = (text: string, headings: string[], page?: number) => ({ type: 'NarrativeText', text, metadata: { headings, ...(page && { page_number: page }) } });
const doc = (elements: ParsedDocument['elements']): ParsedDocument => ({ elements, text: elements.map((e) => e.text).join('\n\n'), metadata: {} });

const handbook = doc([
  title('Travel', 0),
  para('Book trains rather than flights for short trips.', ['Travel'], 1),
  title('Hotels', 1, ['Travel']),
  para('The hotel limit is 120 euros per night.', ['Travel', 'Hotels'], 1),
  title('Receipts', 1, ['Travel']),
  para('Receipts are required for every night. '.repeat(20).trim(), ['Travel', 'Receipts'], 2),
  title('Leave', 0),
  para('Employees get 25 days of annual leave.', ['Leave'], 3),
]);

t.test('parameters are validated with defaults filled in, each problem located', async (t) => {
  t.same(parseChunking('recursive_character', undefined, at), { strategy: 'recursive_character', params: { chunk_size: 1000, chunk_overlap: 150 } });
  t.same(parseChunking('by_title', { max_characters: 500 }, at).params, { max_characters: 500, overlap: 0, combine_under_characters: 300 });
  const unknown = (() => {
    try {
      parseChunking('semantic', {}, at);
    } catch (error) {
      return error;
    }
  })();
  t.type(unknown, ValidationError, 'an unknown strategy is a 422');
  t.throws(() => parseChunking('markdown', { chunk_size: 100, chunk_overlap: 200 }, at), { issues: [{ loc: ['body', 'chunking_params', 'chunk_overlap'] }] });
  t.throws(() => parseChunking('recursive_character', { size: 100 }, at), { issues: [{ loc: ['body', 'chunking_params'] }] }, 'unknown parameters are refused');
});

t.test('recursive_character splits the snapshot text within chunk_size', async (t) => {
  const chunks = await chunkDocument(handbook, parseChunking('recursive_character', { chunk_size: 200, chunk_overlap: 0 }, at));
  t.ok(chunks.length > 3);
  t.ok(
    chunks.every((c) => c.content.length <= 200),
    'no chunk is longer than chunk_size',
  );
});

t.test('markdown writes titles as headings before splitting', async (t) => {
  const chunks = await chunkDocument(handbook, parseChunking('markdown', { chunk_size: 2000, chunk_overlap: 0 }, at));
  t.match(chunks[0]!.content, /^# Travel\n\nBook trains/);
  t.match(chunks.map((c) => c.content).join('\n'), /## Hotels/, 'depth 1 becomes a second-level heading');
});

t.test('by_title starts a chunk at each title, combines small sections and keeps headings and page numbers', async (t) => {
  const chunks = await chunkDocument(handbook, parseChunking('by_title', { max_characters: 400, combine_under_characters: 100 }, at));
  t.match(
    chunks[0],
    { content: /^Travel\n\nBook trains[\s\S]*\n\nHotels\n\nThe hotel limit[^]*night\.$/, metadata: { headings: 'Travel', page_number: 1 } },
    'the short Travel section joins the next one',
  );
  t.match(
    chunks[1],
    { content: /^Receipts\n\n/, metadata: { headings: 'Travel > Receipts', page_number: 2 } },
    'a title starts the next chunk, with its heading trail',
  );
  const receipts = chunks.filter((c) => c.metadata.headings === 'Travel > Receipts');
  t.ok(
    receipts.length > 1 && receipts.every((c) => c.content.startsWith('Receipts\n\nReceipts are required')),
    'a section over max_characters is split, each part under its title',
  );
  t.ok(chunks.every((c) => c.content.length <= 400));
  t.match(chunks.at(-1), { content: 'Leave\n\nEmployees get 25 days of annual leave.', metadata: { headings: 'Leave', page_number: 3 } });
});
