// Issue 16 item 8: ciphertexts carry a key id, a keyring decrypts older keys' values, and a context binds a value to
// its table and row.
import { createCipheriv, randomBytes } from 'node:crypto';
import t from 'tap';
import { createSecrets, keyId } from '../../core/src/services/secrets.js';

const [k1, k2] = [randomBytes(32), randomBytes(32)];

/** A value as the host wrote it before key ids and contexts: `v1:<iv>:<tag>:<data>`. */
function legacyCiphertext(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join(':');
}

t.test('a ciphertext names its key and decrypts only in its context', async (t) => {
  const secrets = createSecrets(k1);
  const stored = secrets.encrypt('sk-live-1', 'mcp_credentials:a:encrypted_secret_json');
  t.match(stored, new RegExp(`^v2:${keyId(k1)}:`), 'the key id is in the ciphertext');
  t.equal(secrets.decrypt(stored, 'mcp_credentials:a:encrypted_secret_json'), 'sk-live-1');
  t.throws(() => secrets.decrypt(stored, 'mcp_credentials:b:encrypted_secret_json'), 'copied to another row it does not decrypt');
  t.throws(() => secrets.decrypt(stored), 'nor without its context');
  t.notOk(keyId(k1).length > 12 || stored.includes(k1.toString('base64')), 'the id reveals nothing of the key');
});

t.test('rotation: the active key encrypts, previous keys still decrypt, unknown keys are named', async (t) => {
  const old = createSecrets(k1).encrypt('sk-old', 'ctx');
  const rotated = createSecrets(k2, [k1]);
  t.equal(rotated.decrypt(old, 'ctx'), 'sk-old', 'a value under a previous key decrypts');
  t.notOk(rotated.isCurrent(old), 'and is due for re-encryption');
  t.ok(rotated.isCurrent(rotated.encrypt('sk-new', 'ctx')), 'new values are under the active key');
  t.throws(
    () => createSecrets(k2).decrypt(old, 'ctx'),
    new RegExp(`encrypted under key ${keyId(k1)}, which is neither the active key nor in \\[secrets\\] previous_keys`),
  );
  const legacy = legacyCiphertext(k1, 'sk-legacy');
  t.equal(rotated.decrypt(legacy, 'ctx'), 'sk-legacy', 'a v1 value of an earlier version decrypts with any key of the ring');
  t.notOk(rotated.isCurrent(legacy));
});
