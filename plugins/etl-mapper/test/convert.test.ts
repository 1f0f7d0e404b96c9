// etl_mapper's row conversion (src/lib/convert.ts): how dates and numbers in the shapes exports have are read,
// coerced or rejected, each cell's issue saying why.
import type { EtlColumnMapping, EtlTargetColumn } from '@agent-host/sdk';
import t from 'tap';
import { rowConverter } from '../src/lib/convert.js';

/** Converts one cell of `type`, read with `conversion`: its value and its issue, if any. */
const cell = (type: EtlTargetColumn['type'], conversion: string | null, text: string) => {
  const mapping: EtlColumnMapping = { target: 'x', source: 'X', conversion, reason: '' };
  const target: EtlTargetColumn = { name: 'x', type, required: false, description: '', allowed_values: [], format: null };
  const row = rowConverter([mapping], ['X'], [target])([text]);
  return [row.values[0], row.issues[0] ? `${row.issues[0].kind}: ${row.issues[0].reason}` : undefined];
};

t.test('dates: each layout, two-digit years, leap days and days that do not exist', async (t) => {
  t.same(cell('date', 'dd/mm/yyyy', '2025-03-04'), ['2025-03-04', undefined], 'yyyy-mm-dd as it is, whatever the layout');
  t.same(cell('date', 'dd/mm/yyyy', '04/03/2025'), ['2025-03-04', 'coerced: "04/03/2025" read as dd/mm/yyyy and written 2025-03-04']);
  t.same(cell('date', 'mm/dd/yyyy', '03/04/2025'), ['2025-03-04', 'coerced: "03/04/2025" read as mm/dd/yyyy and written 2025-03-04']);
  t.same(cell('date', 'dd.mm.yyyy', '4.3.25'), ['2025-03-04', 'coerced: "4.3.25" read as dd.mm.yyyy and written 2025-03-04']);
  t.same(cell('date', 'dd-mm-yyyy', '4 - 3 - 69')[0], '2069-03-04', 'separators may repeat; years below 70 are 20xx');
  t.same(cell('date', 'dd/mm/yyyy', '4/3/70')[0], '1970-03-04', 'and from 70 19xx');
  t.same(cell('date', 'dd/mm/yyyy', '29/02/2024')[0], '2024-02-29', 'a leap day');
  t.same(cell('date', 'dd/mm/yyyy', '29/02/2000')[0], '2000-02-29', 'in a leap century');
  t.same(cell('date', 'dd/mm/yyyy', '29/02/1900'), [null, 'rejected: "29/02/1900" is not a date in dd/mm/yyyy'], 'not in other centuries');
  t.same(cell('date', 'dd/mm/yyyy', '31/04/2025'), [null, 'rejected: "31/04/2025" is not a date in dd/mm/yyyy']);
  t.same(cell('date', 'dd/mm/yyyy', '01/13/2025'), [null, 'rejected: "01/13/2025" is not a date in dd/mm/yyyy']);
  t.same(cell('date', 'dd/mm/yyyy', '00/01/2025'), [null, 'rejected: "00/01/2025" is not a date in dd/mm/yyyy']);
  t.same(cell('date', 'dd/mm/yyyy', '01/01/12025'), [null, 'rejected: "01/01/12025" is not a date in dd/mm/yyyy'], 'no room for a fifth digit');
  t.same(cell('date', 'dd/mm/yyyy', '01/01'), [null, 'rejected: "01/01" is not a date']);
  t.same(cell('date', 'dd/mm/yyyy', '1st of May 2025'), [null, 'rejected: "1st of May 2025" is not a date']);
  t.same(cell('date', 'decimal_comma', '04/03/2025')[0], null, 'a conversion that is no date layout reads yyyy-mm-dd');
  t.same(cell('date', 'toString', '2025/03/04')[0], '2025-03-04', 'and so does a name that only objects have');
});

t.test('numbers: currency signs and group marks go, decimal_comma swaps the marks, integers stay whole', async (t) => {
  t.same(cell('decimal', null, '12.5'), [12.5, undefined]);
  t.same(cell('decimal', null, '$1,234.50'), [1234.5, 'coerced: "$1,234.50" read as 1234.5']);
  t.same(cell('decimal', null, "€ 1'234_5"), [12345, 'coerced: "€ 1\'234_5" read as 12345']);
  t.same(cell('decimal', 'decimal_comma', '1.234,50'), [1234.5, 'coerced: "1.234,50" read as 1234.5']);
  t.same(cell('decimal', null, '-.5'), [-0.5, undefined]);
  t.same(cell('decimal', null, '1e5'), [null, 'rejected: "1e5" is not a number']);
  t.same(cell('integer', null, '7.0'), [7, undefined]);
  t.same(cell('integer', null, '7.5'), [null, 'rejected: "7.5" is not a whole number']);
});
