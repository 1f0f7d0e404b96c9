import t from 'tap';
import { TakeoverHints } from '../../core/src/chat/takeover-hints.js';

t.test('a session is hinted under takeover from when it is seen so until it is seen otherwise; the oldest seen go first', async (t) => {
  const hints = new TakeoverHints(3);
  t.notOk(hints.underTakeover('a'), 'a session never seen is not');
  hints.note('a', true);
  t.ok(hints.underTakeover('a'), 'seen under takeover, it is');
  hints.note('a', false);
  t.notOk(hints.underTakeover('a'), 'seen answered by the AI again, it is not');
  for (const id of ['a', 'b', 'c']) hints.note(id, true);
  hints.note('a', true); // seen again: now the latest seen
  hints.note('d', true);
  t.same(
    ['a', 'b', 'c', 'd'].map((id) => hints.underTakeover(id)),
    [true, false, true, true],
    'past its capacity it forgets the session seen longest ago, counting from when each was last seen',
  );
});
