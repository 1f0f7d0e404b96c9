import { Transform } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { EtlJobRow } from './job-store.js';

/**
 * A job's source as the check at upload parsed it, kept so the conversion reads the records the check accepted
 * instead of parsing the CSV a second time (the parse is most of a job's work). Each record is its field count and
 * its fields, each ended by a NUL: a checked source holds no NUL byte, so no field can contain one. The object lives
 * from the upload until the job has ended.
 */
export const parsedRecordsKey = (job: Pick<EtlJobRow, 'agent_id' | 'id'>) => `etl/${job.agent_id}/${job.id}/parsed-records`;

const END = '\0';

/**
 * Writes records (arrays of fields) as parsed-records text, in chunks of about 64 KiB rather than one per record.
 * `look` sees each record first (the check at upload does its own work there, saving a stream step per record); an
 * error it throws fails the stream.
 */
export function parsedRecordsWriter(look?: (record: string[]) => void): Transform {
  let batch = '';
  return new Transform({
    writableObjectMode: true,
    transform(record: string[], _encoding, next) {
      try {
        look?.(record);
      } catch (error) {
        return next(error as Error);
      }
      batch += record.length === 0 ? `0${END}` : `${record.length}${END}${record.join(END)}${END}`;
      if (batch.length < 65_536) return next();
      const full = batch;
      batch = '';
      next(null, full);
    },
    flush(done) {
      done(null, batch || undefined);
    },
  });
}

/**
 * Reads parsed-records bytes back into records, pushed in batches (the whole records of each chunk read) so that a
 * conversion pays the stream's cost per chunk, not per record; input that ends inside a record is an error.
 */
export function parsedRecordsReader(): Transform {
  const decoder = new StringDecoder('utf8');
  // The text after the last NUL, and the whole fields of a record not yet complete.
  let partial = '';
  let pending: string[] = [];
  return new Transform({
    readableObjectMode: true,
    // One batch waits at most: batches held in a stream's buffer outlive the young generation and grow the old one.
    readableHighWaterMark: 1,
    transform(chunk: Buffer, _encoding, next) {
      // Splitting on NUL is native and far cheaper than a CSV parse. Only the new text is split, so a long field
      // arriving in many chunks costs no more than a short one.
      const parts = decoder.write(chunk).split(END);
      parts[0] = partial + parts[0];
      partial = parts.pop()!;
      const tokens = pending.length === 0 ? parts : pending.concat(parts);
      const batch: string[][] = [];
      let at = 0;
      while (at < tokens.length) {
        const count = Number(tokens[at]);
        if (at + count + 1 > tokens.length) break;
        batch.push(tokens.slice(at + 1, at + 1 + count));
        at += count + 1;
      }
      pending = tokens.slice(at);
      next(null, batch.length === 0 ? undefined : batch);
    },
    flush(done) {
      partial += decoder.end();
      done(partial === '' && pending.length === 0 ? null : new Error('the parsed records of the source end in the middle of a record'));
    },
  });
}
