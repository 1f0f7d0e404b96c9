import t from 'tap';
import { VerifiedTokens } from '../../core/src/admin/verified-tokens.js';

const claims = (sid: string, expiresAtMs: number) => ({ sid, ver: 1, expiresAtMs });

t.test('a verified token is remembered until it expires; the oldest verified go first', async (t) => {
  const tokens = new VerifiedTokens(2);
  t.equal(tokens.get('a', 0), undefined, 'a token never verified is not remembered');
  tokens.add('a', claims('s1', 1_000));
  t.same(tokens.get('a', 999), claims('s1', 1_000), 'before its exp, its claims');
  t.equal(tokens.get('a', 1_000), undefined, 'from its exp on, nothing: it must be verified again, and is refused there');
  t.equal(tokens.get('a', 0), undefined, 'and it was forgotten');
  for (const token of ['a', 'b', 'c']) tokens.add(token, claims(token, 5_000));
  t.same(
    ['a', 'b', 'c'].map((token) => tokens.get(token, 0)?.sid),
    [undefined, 'b', 'c'],
    'past its capacity it forgets the token verified longest ago',
  );
});
