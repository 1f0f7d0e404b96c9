import { BadRequestError, type DocumentInput, type DocumentParser, type ParsedDocument, type ParsedElement } from '@agent-host/sdk';
import { parse } from 'csv-parse/sync';
import { decodeText, parsedDocument } from './elements.js';
import { overLimit, type ParseLimits } from './parse-limits.js';

const DELIMITERS = [',', ';', '\t', '|'];

/** The delimiter occurring most often, outside quotes, in the first line (comma on a tie). */
function sniffDelimiter(text: string): string {
  const counts = new Map(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    else if (!quoted && (char === '\n' || char === '\r')) break;
    else if (!quoted && counts.has(char)) counts.set(char, counts.get(char)! + 1);
  }
  return DELIMITERS.reduce((best, d) => (counts.get(d)! > counts.get(best)! ? d : best), ',');
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * `text/csv`: the first record is the header; every later record becomes one
 * TableRow element whose text pairs each value with its column
 * (`name: Ada; city: London`), so a row stands alone as a chunk.
 */
export class CsvParser implements DocumentParser {
  constructor(private readonly limits: ParseLimits) {}

  async parse(input: DocumentInput, options?: { signal?: AbortSignal }): Promise<ParsedDocument> {
    options?.signal?.throwIfAborted();
    const text = decodeText(input);
    const delimiter = sniffDelimiter(text);
    let records: string[][];
    try {
      records = parse(text, { delimiter, relax_column_count: true, skip_empty_lines: true, trim: true, max_record_size: this.limits.maxTextChars });
    } catch (error) {
      throw new BadRequestError(`${input.filename}: not valid CSV (${(error as Error).message})`, { code: 'DOCUMENT_UNREADABLE' });
    }
    const [header = [], ...rows] = records;
    const widest = records.reduce((most, record) => Math.max(most, record.length), 0);
    if (widest > this.limits.csvMaxColumns)
      throw overLimit(input.filename, `a row has ${widest} columns (limit ${this.limits.csvMaxColumns})`, 'csv_max_columns');
    const columns = header.map((name, i) => cut(name, this.limits.csvMaxHeaderChars) || `column_${i + 1}`);
    // Every row repeats the column names, so the text may be far larger than the file: counted as it is built.
    let produced = 0;
    const elements: ParsedElement[] = rows.map((row, index) => {
      const text = row
        .map((value, i) => [columns[i] ?? `column_${i + 1}`, value] as const)
        .filter(([, value]) => value !== '')
        .map(([column, value]) => `${column}: ${value}`)
        .join('; ');
      produced += text.length + 2;
      if (produced > this.limits.maxTextChars) {
        throw overLimit(input.filename, `its rows expand to more than ${this.limits.maxTextChars} characters of text`, 'max_text_chars');
      }
      return { type: 'TableRow', text, metadata: { row_number: index + 1 } };
    });
    return parsedDocument(elements, { parser: 'local-csv', filename: input.filename, columns, row_count: rows.length, delimiter });
  }
}
