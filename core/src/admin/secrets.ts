import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/** A random URL-safe token (refresh tokens, challenge nonces and tokens). */
export const randomToken = (bytes = 32) => randomBytes(bytes).toString('base64url');

/** Random tokens are stored only as SHA-256. */
export const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** argon2id with the library's defaults (m=19 MiB, t=2, p=1, the OWASP baseline). */
export const hashPassword = (password: string) => hash(password);

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Spent on unknown usernames so timing does not tell them from wrong passwords. */
let dummyHash: Promise<string> | undefined;
export async function burnPasswordCheck(password: string): Promise<void> {
  dummyHash ??= hash(randomToken());
  await verifyPassword(await dummyHash, password);
}
