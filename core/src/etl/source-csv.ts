import { createReadStream, createWriteStream } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ValidationError, type ValidationIssue } from '@agent-host/sdk';
import { parse } from 'csv-parse';
import { parsedRecordsWriter } from './parsed-records.js';

/** What a checked source CSV is: its header, its first rows (the plan's sample) and how many data rows it has. */
export interface SourceSummary {
  columns: string[];
  sample: string[][];
  rows: number;
}

/** The options every reading of a source CSV uses: the check at upload, and the conversion of a job without parsed records. */
// A quote inside an unquoted field (`=HYPERLINK("x")`) is taken as text, as spreadsheets write it; a quoted field left open is still an error.
export const SOURCE_CSV_OPTIONS = { bom: true, skip_empty_lines: true, relax_quotes: true } as const;

const issue = (line: number | null, msg: string): ValidationIssue => ({
  loc: ['body', 'source_csv', ...(line === null ? [] : [line])],
  msg,
  type: 'value_error',
});

/** Passes bytes through while checking they are UTF-8 text without NUL bytes (a binary file is not a CSV). */
function utf8Text(): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        decoder.decode(chunk, { stream: true });
      } catch {
        return done(new ValidationError([issue(null, 'is not UTF-8 text; save it as "CSV UTF-8" (UTF-8 with or without a BOM is read)')]));
      }
      if (chunk.includes(0)) return done(new ValidationError([issue(null, 'is not a CSV: it holds binary data')]));
      done(null, chunk);
    },
  });
}

/**
 * Reads a spooled source CSV once, as a stream (never whole in memory), and refuses (422 naming the line) a file that
 * is not UTF-8 text, does not parse (mismatched quotes, rows of another width than the header), is empty, has only a
 * header, or has a blank or repeated column name. The records it parsed, header first, go to `recordsFile` as parsed
 * records (./parsed-records.ts), for the job's conversion.
 */
export async function checkSourceCsv(file: string, sampleRows: number, recordsFile: string): Promise<SourceSummary> {
  let columns: string[] | undefined;
  const sample: string[][] = [];
  let rows = 0;
  // Each record is looked at as it is parsed and written on (a stream pipe: no promise per row); only the header and the sample are kept.
  const look = (record: string[]) => {
    if (!columns) {
      columns = record.map((c) => c.trim());
      const seen = new Set<string>();
      for (const [index, name] of columns.entries()) {
        if (!name) throw new ValidationError([issue(1, `column ${index + 1} of the header has no name`)]);
        if (seen.has(name)) throw new ValidationError([issue(1, `the header names "${name}" twice`)]);
        seen.add(name);
      }
      return;
    }
    rows++;
    if (sample.length < sampleRows) sample.push(record);
  };
  try {
    await pipeline(createReadStream(file), utf8Text(), parse(SOURCE_CSV_OPTIONS), parsedRecordsWriter(look), createWriteStream(recordsFile, { mode: 0o600 }));
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    const line = (error as { lines?: number }).lines ?? null;
    throw new ValidationError([issue(line, `is not a CSV this host reads: ${(error as Error).message}`)]);
  }
  if (!columns) throw new ValidationError([issue(null, 'is empty: a CSV with a header row and at least one data row is needed')]);
  if (rows === 0) throw new ValidationError([issue(null, 'has a header but no data rows')]);
  return { columns, sample, rows };
}
