import t from 'tap';
import { bindableJson } from '../../core/src/db/prepared-query.js';

t.test('JSON for a jsonb parameter stores a NUL as the two characters \\0, and nothing else differs', async (t) => {
  const cases: [unknown, unknown][] = [
    [
      { a: 'plain', n: 1, nested: ['x', null] },
      { a: 'plain', n: 1, nested: ['x', null] },
    ],
    [{ a: 'one\0nul' }, { a: 'one\\0nul' }],
    [
      ['\0\0', { deep: { er: 'x\0' } }],
      ['\\0\\0', { deep: { er: 'x\\0' } }],
    ],
    [{ 'key\0': 'v' }, { 'key\\0': 'v' }],
    [{ text: 'a backslash then u0000: \\u0000' }, { text: 'a backslash then u0000: \\u0000' }],
    [{ text: 'a backslash, then a NUL: \\\0' }, { text: 'a backslash, then a NUL: \\\\0' }],
    [{ text: 'two backslashes, then u0000: \\\\u0000' }, { text: 'two backslashes, then u0000: \\\\u0000' }],
  ];
  for (const [value, stored] of cases) {
    const json = bindableJson(value);
    t.notMatch(json, /(?<!\\)(\\\\)*\\u0000/, `no NUL escape is left in ${JSON.stringify(value)}`);
    t.same(JSON.parse(json), stored, `and it reads back as ${JSON.stringify(stored)}`);
  }
});
