import { ValidationError, type ValidationIssue } from '@agent-host/sdk';
import { CsvError, parse } from 'csv-parse/sync';

/** One question of a dataset as a CSV row gives it. */
export interface DatasetItemInput {
  question: string;
  expected_answers: string[];
  domain: string | null;
  difficulty: string | null;
  source: string | null;
  metadata: Record<string, unknown>;
}

const QUESTION = ['question', 'input'];
const EXPECTED = /^expected_answer(?:_\d+)?$/;
const SLICES = ['domain', 'difficulty', 'source'];
const LOC = ['body', 'file'];

const issue = (where: string[], msg: string): ValidationIssue => ({ loc: [...LOC, ...where], msg, type: 'value_error' });

/**
 * The items of a QA dataset CSV (UTF-8, a BOM and CRLF allowed, quoted fields with commas and newlines). Headers,
 * case-insensitive: `question` (or `input`), one or more `expected_answer` / `expected_answer_2`... (each non-empty
 * cell an accepted answer, in column order), optional `domain`, `difficulty`, `source`, and `metadata` (a JSON
 * object). Any other header is refused, so a misspelt one does not silently drop a column. Every problem is a 422
 * naming the row (1 is the header row) and column; nothing is imported then.
 */
export function readDatasetCsv(bytes: Uint8Array, maxRows: number): DatasetItemInput[] {
  let rows: string[][];
  try {
    rows = parse(Buffer.from(bytes), { bom: true, skip_empty_lines: true, encoding: 'utf8' }) as string[][];
  } catch (error) {
    if (error instanceof CsvError) throw new ValidationError([issue([`row ${error.lines ?? '?'}`], `not valid CSV: ${error.message}`)]);
    throw error;
  }
  const [header, ...body] = rows;
  if (!header) throw new ValidationError([issue([], 'the file is empty: expected a header row with question and expected_answer')]);
  if (body.length > maxRows) throw new ValidationError([issue([], `the file has ${body.length} rows; the limit is ${maxRows} ([evaluation] csv_max_rows)`)]);
  const names = header.map((name) => name.trim().toLowerCase());
  const issues: ValidationIssue[] = [];
  names.forEach((name, i) => {
    const known = QUESTION.includes(name) || EXPECTED.test(name) || SLICES.includes(name) || name === 'metadata';
    if (!known) {
      issues.push(
        issue(
          ['row 1', header[i]!],
          `unknown column "${header[i]}"; accepted: question, expected_answer, expected_answer_2..., domain, difficulty, source, metadata`,
        ),
      );
    } else if (names.indexOf(name) !== i) issues.push(issue(['row 1', header[i]!], `column "${header[i]}" appears twice`));
  });
  const question = names.findIndex((name) => QUESTION.includes(name));
  const expected = names.flatMap((name, i) => (EXPECTED.test(name) ? [i] : []));
  if (question < 0) issues.push(issue(['row 1'], 'no question column (question or input)'));
  if (expected.length === 0) issues.push(issue(['row 1'], 'no expected_answer column'));
  if (issues.length) throw new ValidationError(issues);
  const cell = (cells: string[], name: string) => {
    const i = names.indexOf(name);
    return i >= 0 ? cells[i]!.trim() || null : null;
  };
  const items = body.map((cells, index): DatasetItemInput => {
    const row = `row ${index + 2}`;
    const text = cells[question]!.trim();
    if (!text) issues.push(issue([row, header[question]!], 'the question is empty'));
    const answers = expected.map((i) => cells[i]!.trim()).filter((answer) => answer !== '');
    if (answers.length === 0) issues.push(issue([row, header[expected[0]!]!], 'no expected answer'));
    return {
      question: text,
      expected_answers: answers,
      domain: cell(cells, 'domain'),
      difficulty: cell(cells, 'difficulty'),
      source: cell(cells, 'source'),
      metadata: metadataOf(cell(cells, 'metadata'), () => issues.push(issue([row, 'metadata'], 'metadata must be a JSON object'))),
    };
  });
  // The first fifty problems are enough to fix a file.
  if (issues.length) throw new ValidationError(issues.slice(0, 50));
  return items;
}

function metadataOf(raw: string | null, refuse: () => void): Record<string, unknown> {
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // refused below
  }
  refuse();
  return {};
}
