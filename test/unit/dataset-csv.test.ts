// Dataset CSVs (core/src/evaluation/csv-items.ts): header aliases and limits, read without a host.
import t from 'tap';
import { ValidationError } from '@agent-host/sdk';
import { readDatasetCsv } from '../../core/src/evaluation/csv-items.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const issues = (text: string, maxRows = 100) => {
  try {
    readDatasetCsv(bytes(text), maxRows);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues.map((issue) => `${issue.loc.join('.')}: ${issue.msg}`);
    throw error;
  }
  return [];
};

t.test('headers are case-insensitive, input names the question, empty rows are skipped', async (t) => {
  const items = readDatasetCsv(bytes('Input,EXPECTED_ANSWER,Expected_Answer_3\nq1,a,b\n\nq2,,c\n'), 10);
  t.same(
    items.map((i) => [i.question, i.expected_answers]),
    [
      ['q1', ['a', 'b']],
      ['q2', ['c']],
    ],
  );
});

t.test('limits and header mistakes are refused, naming the place', async (t) => {
  t.match(issues('question,expected_answer\nq,a\nq,a\nq,a\n', 2), [/^body\.file: the file has 3 rows; the limit is 2/]);
  t.match(issues('question,expected_answer,Question\nq,a,b\n'), [/^body\.file\.row 1\.Question: column "Question" appears twice/]);
  t.match(issues('expected_answer\na\n'), [/^body\.file\.row 1: no question column/]);
  t.match(issues('question,domain\nq,x\n'), [/^body\.file\.row 1: no expected_answer column/]);
  t.match(issues('question,expected_answer\n"unclosed,a\n'), [/^body\.file\.row \d+: not valid CSV/]);
});
