// Issued session ids (`issueSessionId`): 128 random bits each, written as 22 base64url characters, never repeated,
// also across the refills of the pool of random bytes they are cut from.
import { issueSessionId } from '@agent-host/core';
import t from 'tap';

t.test('issued session ids are 16 random bytes in base64url, all different across pool refills', async (t) => {
  const ids = Array.from({ length: 1000 }, () => issueSessionId());
  t.ok(
    ids.every((id) => /^[A-Za-z0-9_-]{22}$/.test(id) && Buffer.from(id, 'base64url').length === 16),
    'each is 22 base64url characters, 16 bytes',
  );
  t.equal(new Set(ids).size, ids.length, 'no id is issued twice');
  const bits = ids.map((id) => Buffer.from(id, 'base64url')).reduce((n, bytes) => n + bytes.reduce((m, b) => m + popcount(b), 0), 0);
  const share = bits / (ids.length * 128);
  t.ok(share > 0.48 && share < 0.52, `about half the bits are set (${share.toFixed(3)}): no id is cut from bytes left unfilled`);
});

function popcount(byte: number): number {
  let n = 0;
  for (let b = byte; b > 0; b >>= 1) n += b & 1;
  return n;
}
