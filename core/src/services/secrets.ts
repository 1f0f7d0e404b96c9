import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SecretsService } from '@agent-host/sdk';

/** Parses a base64 key of exactly 32 bytes. */
export function parseSecretsKey(encoded: string): Buffer {
  const key = Buffer.from(encoded.trim(), 'base64');
  if (key.length !== 32) throw new Error('AGENT_HOST_SECRETS_KEY must be 32 bytes, base64-encoded (openssl rand -base64 32)');
  return key;
}

/**
 * The configured key, or outside production a key generated once and kept in
 * the data directory, so encrypted rows stay readable across restarts.
 */
export function resolveSecretsKey(configured: string, dataDir: string): Buffer {
  return configured.trim() ? parseSecretsKey(configured) : resolveGeneratedKey(dataDir, 'secrets.key');
}

/** A 32-byte key generated once into `<dataDir>/<name>` (mode 600) and read back on later starts. */
export function resolveGeneratedKey(dataDir: string, name: string): Buffer {
  const file = path.join(dataDir, name);
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600 });
  return parseSecretsKey(readFileSync(file, 'utf8'));
}

/** A key's id in ciphertexts: the start of its SHA-256, which names the key without revealing it. */
export const keyId = (key: Buffer) => createHash('sha256').update(key).digest('hex').slice(0, 12);

/** The secrets service with its keyring: what it encrypts carries the active key's id. */
export interface Keyring extends SecretsService {
  /** Whether `ciphertext` is under the active key in the current format (else `reencrypt` rewrites it). */
  isCurrent(ciphertext: string): boolean;
}

/**
 * AES-256-GCM under a keyring: one active key, older ones only to decrypt (`[secrets] previous_keys`). Ciphertexts
 * are `v2:<key id>:<iv>:<tag>:<data>` (base64url), and a `context` (the table, row and column a value is stored in)
 * is bound as additional authenticated data, so a ciphertext copied to another row does not decrypt. `v1:` values
 * of earlier versions (the active key or a previous one, no context) still decrypt.
 */
export function createSecrets(active: Buffer, previous: readonly Buffer[] = []): Keyring {
  const ring = new Map([active, ...previous].map((key) => [keyId(key), key]));
  const activeId = keyId(active);
  const open = (key: Buffer, iv: string, tag: string, data: string, context: string | undefined) => {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    if (context !== undefined) decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  };
  return {
    encrypt(plaintext, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', active, iv);
      if (context !== undefined) cipher.setAAD(Buffer.from(context, 'utf8'));
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v2', activeId, ...[iv, cipher.getAuthTag(), data].map((p) => p.toString('base64url'))].join(':');
    },
    decrypt(ciphertext, context) {
      const parts = ciphertext.split(':');
      if (parts[0] === 'v2' && parts.length === 5) {
        const key = ring.get(parts[1]!);
        if (!key) throw new Error(`encrypted under key ${parts[1]}, which is neither the active key nor in [secrets] previous_keys`);
        return open(key, parts[2]!, parts[3]!, parts[4]!, context);
      }
      if (parts[0] === 'v1' && parts.length === 4) {
        for (const key of ring.values()) {
          try {
            return open(key, parts[1]!, parts[2]!, parts[3]!, undefined);
          } catch {
            // not this key: the next one
          }
        }
        throw new Error('no key of the keyring decrypts this value');
      }
      throw new Error('not a ciphertext produced by this host');
    },
    isCurrent: (ciphertext) => ciphertext.startsWith(`v2:${activeId}:`),
  };
}
