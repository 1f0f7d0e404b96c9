import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SecretsService } from '@agent-host/sdk';

const VERSION = 'v1';

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

/** AES-256-GCM; ciphertext format `v1:<iv>:<tag>:<data>` in base64url. */
export function createSecrets(key: Buffer): SecretsService {
  return {
    encrypt(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join(':');
    },
    decrypt(ciphertext) {
      const [version, iv, tag, data] = ciphertext.split(':');
      if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('not a ciphertext produced by this host');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    },
  };
}
